"""A dataset as the engine runs it: every case with its files, images, ground truth and
evaluators resolved once, at load time. The loader builds these; the runner only reads them.

A big dataset's prepared cases are not held as objects: `PreparedCases` keeps them pickled, a
chunk at a time, in an unlinked temporary file, and gives them back as they are needed, so a run's
memory does not grow with the number of cases.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import pickle
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from agentv_py.errors import Problem
from agentv_py.media import ImageRef, is_url
from agentv_py.models.dataset import Dataset, EvalCase
from agentv_py.models.evaluators import EvaluatorConfig
from agentv_py.models.indexed import Indexed

GUIDELINE_FILE_CAP = 10 * 1024 * 1024  # bytes of one guideline file: as much as a file inlined into a message


def _guideline_text(path: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read(GUIDELINE_FILE_CAP + 1)
    name = os.path.basename(path)
    if len(data) > GUIDELINE_FILE_CAP:
        raise ValueError(f"guideline file {name} is over the {GUIDELINE_FILE_CAP // (1024 * 1024)} MB limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"guideline file {name} is not UTF-8 text") from None
    return text.replace("\r\n", "\n").strip()


class ProblemSource(Protocol):
    """Turns a location in a loaded file into a located `Problem` (`file:line: location: ...`)."""

    def problem(self, parts: Iterable[str | int], message: str) -> Problem: ...


@dataclass(frozen=True)
class PreparedTurn:
    """One turn of a conversation case as the engine runs it."""

    evaluators: list[EvaluatorConfig]  # its own; the default judge for an expected answer; none
    expected: Any  # its expected answer (ground truth parsed), or None


@dataclass
class PreparedCase:
    """An eval case with everything the engine needs resolved once, at load time."""

    case: EvalCase
    index: int
    files: list[str]  # input files that are not guideline files, in order (AgentV's input_files)
    images: list[ImageRef]
    expected: Any
    question: str
    evaluators: list[EvaluatorConfig]  # the case's own, else the suite's
    guideline_files: list[str] = field(default_factory=list)  # absolute paths, in order (`.agentv/config.yaml`)
    guideline_items: frozenset[int] = frozenset()  # which `file` items (from 0, dataset order) are guideline files
    # a conversation case's turns (models/conversation.py): each turn's evaluators, expected value
    turns: list[PreparedTurn] = field(default_factory=list)
    repeat: int | None = None  # `--repeat K`: which of the case's K runs this is (from 1); None: not repeated

    @property
    def file_paths(self) -> list[str]:
        """AgentV's `file_paths`: guideline files, then the other input files (`{FILES}`)."""
        return [*self.guideline_files, *self.files]

    def guidelines(self) -> str:
        """AgentV's `guidelines` text (a cli target's `{GUIDELINES}`, a model's `[[ ## Guidelines ## ]]`
        block): each guideline file, CRLF as LF and trimmed, as `<file path="<basename>">` + newline +
        text + newline + `</file>`, joined by a blank line; "" without guideline files. Raises
        ValueError for a file over GUIDELINE_FILE_CAP or not UTF-8, OSError for one unreadable."""
        return "\n\n".join(
            f'<file path="{os.path.basename(path)}">\n{_guideline_text(path)}\n</file>' for path in self.guideline_files
        )


_CHUNKS_KEPT = 2  # chunks kept unpickled (the one the run is in, and the one before or after)


IMAGES = 1  # the case has images
OWN_EVALUATORS = 2  # the case gives its own evaluator list
RUBRICS = 4  # the case has `rubrics:` (AgentV adds a rubric evaluator)
URL_FILES = 8  # an input file is an http(s) URL
IMAGE_URLS = 16  # an image is an http(s) URL
SKIPPED = 32  # the case says `skip:`: it does not run
CONVERSATION = 64  # a multi-turn conversation case (models/conversation.py)


def case_flags(prepared: PreparedCase) -> int:
    """What a few checks before a run look for in a case, as bits: those checks then read back
    only the cases they concern, not all of a big dataset (`PreparedCases.where`)."""
    case = prepared.case
    return (
        (IMAGES if prepared.images else 0)
        | (OWN_EVALUATORS if case.case_evaluators is not None else 0)
        | (RUBRICS if case.rubrics else 0)
        | (URL_FILES if any(is_url(path) for path in prepared.files) else 0)
        | (IMAGE_URLS if any(image.source == "url" for image in prepared.images) else 0)
        | (SKIPPED if case.skip_reason is not None else 0)
        | (CONVERSATION if case.conversation is not None else 0)
    )


def _pack(prepared: PreparedCase, shared: dict[int, int]) -> PreparedCase:
    """A case as stored: each evaluator shared by every case (the suite's) replaced by its index in
    the shared list, so it is stored once and every case gets the same object back (`_unpack`)."""
    encoded: list[Any] = [shared.get(id(config), config) for config in prepared.evaluators]
    return dataclasses.replace(prepared, evaluators=encoded)


def _unpack(stored: PreparedCase, shared: Sequence[EvaluatorConfig]) -> PreparedCase:
    encoded: list[Any] = stored.evaluators  # indices of shared evaluators among configs (`_pack`)
    stored.evaluators = [shared[config] if isinstance(config, int) else config for config in encoded]
    return stored


class PreparedCases(Indexed[PreparedCase]):
    """A dataset's prepared cases, in order. Up to `chunk_cases` they are held as objects; beyond
    that every chunk the loader adds is pickled into an unlinked temporary file, and read back (the
    last few kept) when a case of it is needed, so memory stays flat in the number of cases. Only
    what the loader pickled is ever unpickled. `ids` are held for every case. Thread-safe for
    reading."""

    chunk_cases = 1000  # cases the loader validates, prepares and adds together

    def __init__(self, shared: Sequence[EvaluatorConfig] = (), *, flagged_only: bool = False) -> None:
        """`flagged_only`: keep only the cases with any `case_flags` bit (all the checks before a
        run read back: `agentv validate` runs nothing), and for the others only their id and flags;
        reading one of them back is a LookupError."""
        self.flagged_only = flagged_only
        self._kept_at: dict[int, tuple[int, int]] = {}  # flagged_only: case index -> (chunk, position)
        self.ids: list[str] = []
        self.flags = bytearray()  # each case's `case_flags`
        self._shared = list(shared)
        self._shared_ids = {id(obj): i for i, obj in enumerate(self._shared)}
        self._held: list[PreparedCase] | None = []  # every case, until a second chunk comes
        self._file: IO[bytes] | None = None
        self._chunks: list[tuple[int, int]] = []  # (offset, length) of each pickled chunk
        self._starts: list[int] = []  # the index of each chunk's first case
        self._stored = 0  # cases in the file
        self._kept: OrderedDict[int, list[PreparedCase]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, chunk: list[PreparedCase]) -> None:
        """Append a chunk of cases (the loader's, `chunk_cases` at a time)."""
        start = len(self.ids)
        self.ids.extend(prepared.case.id for prepared in chunk)
        self.flags.extend(case_flags(prepared) for prepared in chunk)
        if self.flagged_only:
            kept = [index for index in range(start, len(self.ids)) if self.flags[index]]
            if kept:
                if self._file is None:
                    self._held = None
                    self._file = tempfile.TemporaryFile(prefix="agentv-cases-")  # noqa: SIM115 - as long as the cases
                for position, index in enumerate(kept):
                    self._kept_at[index] = (len(self._chunks), position)
                self._store([chunk[index - start] for index in kept])
            return
        if self._held is not None and len(self._held) + len(chunk) <= self.chunk_cases:
            self._held.extend(chunk)
            return
        if self._held is not None:
            held, self._held = self._held, None
            self._file = tempfile.TemporaryFile(prefix="agentv-cases-")  # noqa: SIM115 - lives as long as the cases
            if held:
                self._store(held)
        self._store(chunk)

    def _store(self, chunk: list[PreparedCase]) -> None:
        assert self._file is not None
        data = pickle.dumps([_pack(prepared, self._shared_ids) for prepared in chunk], protocol=pickle.HIGHEST_PROTOCOL)
        offset = self._file.seek(0, os.SEEK_END)
        self._file.write(data)
        self._file.flush()
        self._chunks.append((offset, len(data)))
        self._starts.append(self._stored)
        self._stored += len(chunk)

    def _chunk(self, number: int) -> list[PreparedCase]:
        with self._lock:
            kept = self._kept.get(number)
            if kept is not None:
                self._kept.move_to_end(number)
                return kept
            assert self._file is not None
            offset, length = self._chunks[number]
            data = os.pread(self._file.fileno(), length, offset)
            chunk = [_unpack(packed, self._shared) for packed in pickle.loads(data)]
            self._kept[number] = chunk
            if len(self._kept) > _CHUNKS_KEPT:
                self._kept.popitem(last=False)
            return chunk

    def __len__(self) -> int:
        return len(self.ids)

    def _at(self, index: int) -> PreparedCase:
        if self.flagged_only:
            if index not in self._kept_at:
                raise LookupError(f"case {index} has no flags: not kept (PreparedCases(flagged_only=True))")
            number, position = self._kept_at[index]
            return self._chunk(number)[position]
        if self._held is not None:
            return self._held[index]
        number = bisect.bisect_right(self._starts, index) - 1
        return self._chunk(number)[index - self._starts[number]]

    def __iter__(self) -> Iterator[PreparedCase]:
        if self.flagged_only:
            yield from (self._at(index) for index in range(len(self.ids)))
            return
        if self._held is not None:
            yield from self._held
            return
        for number in range(len(self._chunks)):
            yield from self._chunk(number)

    def where(self, flag: int) -> list[int]:
        """The indices of the cases with any of the `flag` bits (`case_flags`)."""
        return [i for i, flags in enumerate(self.flags) if flags & flag]


class CaseSelection(Indexed[PreparedCase]):
    """Some of a dataset's cases, by index (`--eval-id`, the cases a re-run or a re-score takes):
    read through the dataset's `PreparedCases` as they are needed, not held."""

    def __init__(self, cases: Sequence[PreparedCase], indices: Sequence[int]) -> None:
        self._cases = cases
        self._indices = list(indices)
        all_ids = case_ids(cases)
        self.ids = [all_ids[i] for i in self._indices]

    def __len__(self) -> int:
        return len(self._indices)

    def _at(self, index: int) -> PreparedCase:
        return self._cases[self._indices[index]]

    def __iter__(self) -> Iterator[PreparedCase]:
        return (self._cases[i] for i in self._indices)

    def where(self, flag: int) -> list[int]:
        """The positions in this selection of the cases with any of the `flag` bits."""
        flagged = set(cases_where(self._cases, flag))
        return [position for position, i in enumerate(self._indices) if i in flagged]


class Repeated(Indexed[PreparedCase]):
    """`--repeat K`: each of `cases` K times, repeat by repeat (every case's first run, then every
    case's second, ...), each a copy of its case that knows its repeat (from 1). `units`: only
    these (position in `cases`, repeat) pairs, in this order (what a resumed run still lacks)."""

    def __init__(
        self, cases: Sequence[PreparedCase], repeats: int, units: Sequence[tuple[int, int]] | None = None
    ) -> None:
        self._cases = cases
        self.repeats = repeats
        self._units = list(units) if units is not None else None
        all_ids = case_ids(cases)
        self.ids = [all_ids[position] for position, _ in self.units()]

    def units(self) -> Iterator[tuple[int, int]]:
        """(position in the cases, repeat) of each run, in order."""
        if self._units is not None:
            return iter(self._units)
        count = len(self._cases)
        return ((position, repeat) for repeat in range(1, self.repeats + 1) for position in range(count))

    def __len__(self) -> int:
        return len(self._units) if self._units is not None else len(self._cases) * self.repeats

    def _at(self, index: int) -> PreparedCase:
        if self._units is not None:
            position, repeat = self._units[index]
        else:
            repeat, position = divmod(index, len(self._cases))
            repeat += 1
        return dataclasses.replace(self._cases[position], repeat=repeat)

    def __iter__(self) -> Iterator[PreparedCase]:
        return (dataclasses.replace(self._cases[position], repeat=repeat) for position, repeat in self.units())

    def where(self, flag: int) -> list[int]:
        """The positions of the runs whose case has any of the `flag` bits."""
        flagged = set(cases_where(self._cases, flag))
        return [index for index, (position, _) in enumerate(self.units()) if position in flagged]


def case_ids(cases: Sequence[PreparedCase]) -> list[str]:
    """The ids of `cases`, in order, without reading a case back (`PreparedCases.ids`)."""
    if isinstance(cases, (PreparedCases, CaseSelection, Repeated)):
        return cases.ids
    return [prepared.case.id for prepared in cases]


def cases_where(cases: Sequence[PreparedCase], flag: int) -> list[int]:
    """The positions in `cases` of those with any of the `flag` bits (`case_flags`), read from the
    flags kept for a dataset's cases when there are some, so that no case is read back."""
    if isinstance(cases, (PreparedCases, CaseSelection, Repeated)):
        return cases.where(flag)
    return [i for i, prepared in enumerate(cases) if case_flags(prepared) & flag]


def select(cases: Sequence[PreparedCase], wanted: Iterable[str]) -> CaseSelection:
    """The cases with these ids (each id a case of `cases`), in the order given."""
    index = {case_id: i for i, case_id in enumerate(case_ids(cases))}
    return CaseSelection(cases, [index[case_id] for case_id in wanted])


class CaseModels(Indexed[EvalCase]):
    """The `EvalCase`s of `PreparedCases`, read through them (a loaded dataset's `model.evalcases`)."""

    def __init__(self, cases: PreparedCases) -> None:
        self._cases = cases

    def where(self, flag: int) -> list[int]:
        """The indices of the cases with any of the `flag` bits (`case_flags`)."""
        return self._cases.where(flag)

    def __len__(self) -> int:
        return len(self._cases)

    def _at(self, index: int) -> EvalCase:
        return self._cases[index].case

    def __iter__(self) -> Iterator[EvalCase]:
        return (prepared.case for prepared in self._cases)


@dataclass
class LoadedDataset:
    """A validated dataset file and its prepared cases."""

    path: Path
    name: str
    model: Dataset
    cases: PreparedCases
    warnings: list[Problem] = field(default_factory=list)
    source: ProblemSource | None = None  # for problems found later (judge targets)

    @property
    def directory(self) -> Path:
        return self.path.parent
