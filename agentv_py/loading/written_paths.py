"""Where a value of a translated file was written (`WrittenPaths`), and a `Source` that locates
problems there (`TranslatedSource`).

A dataset in AgentV v4.42's vocabulary (`tests`, `assertions`, `command`, ...) is read into the
internal one (`evalcases`, `evaluators`, `script`, ...) before it is validated (`loading.agentv_442`).
Every check after that speaks of internal paths; a problem must still point at the line and the
key the user wrote. The translation records, for each internal path it made, the written path it
came from; a problem's path is mapped back by its longest recorded prefix."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agentv_py.errors import Problem
from agentv_py.loading.source import Source, format_location

Path_ = tuple[str | int, ...]


@dataclass
class WrittenPaths:
    """Internal path prefix → where it was written (the file, None for the dataset itself, and the
    path there), for every key the translation renamed or moved and every case read from another
    file. `source` is the file being translated now: what `record` and problems are tied to."""

    prefixes: dict[Path_, tuple[Source | None, Path_]] = field(default_factory=dict)
    source: Source | None = None

    def record(self, internal: Path_, written: Path_) -> None:
        """`internal` was written at `written` in the file being translated."""
        self.record_in(self.source, internal, written)

    def record_in(self, source: Source | None, internal: Path_, written: Path_) -> None:
        """`internal` was written at `written` in `source` (None: the dataset itself)."""
        if internal != written or source is not None:
            self.prefixes[internal] = (source, written)

    def same_as(self, internal: Path_, other: Path_) -> None:
        """`internal` is a copy of `other` (an internal path already recorded): located where it is."""
        source, written = self.locate(other)
        self.record_in(source, internal, tuple(written))

    def locate(self, parts: Iterable[str | int]) -> tuple[Source | None, list[str | int]]:
        """Where `parts` (an internal path) was written: its longest recorded prefix mapped back."""
        parts = list(parts)
        for cut in range(len(parts), 0, -1):
            mapped = self.prefixes.get(tuple(parts[:cut]))
            if mapped is not None:
                return mapped[0], [*mapped[1], *parts[cut:]]
        return None, parts

    def written(self, parts: Iterable[str | int]) -> list[str | int]:
        return self.locate(parts)[1]


@dataclass
class TranslatedSource(Source):
    """A source whose problems are located where the user wrote the value (see the module)."""

    paths: WrittenPaths = field(default_factory=WrittenPaths)
    case_problems: set[Problem] = field(default_factory=set)  # those made for a case's (internal) path

    @classmethod
    def of(cls, source: Source, paths: WrittenPaths, cases_key: str) -> TranslatedSource:
        return cls(source.path, source.display, source.lines, cases_key=cases_key, paths=paths)

    def written_problem(self, elsewhere: Source | None, parts: Iterable[str | int], message: str) -> Problem:
        """A problem the translation found where a value is written: in the dataset itself
        (`elsewhere` None), else in the case file `elsewhere`; located as is."""
        if elsewhere is not None:
            return elsewhere.problem(parts, message)
        return Source.problem(self, parts, message)

    def of_a_case(self, problem: Problem) -> bool:
        return problem in self.case_problems

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        located = self._problem(parts, message)
        if parts[:1] == ["evalcases"]:  # a case may be written in another file: known by its internal path
            self.case_problems.add(located)
        return located

    def _problem(self, parts: list[str | int], message: str) -> Problem:
        elsewhere, written = self.paths.locate(parts)
        # the loader's own words name the internal key: say the one the file uses
        message = message.replace("evalcases", self.cases_key)
        if elsewhere is not None:  # a case read from another file
            return elsewhere.problem(written, message)
        return Problem(self.display, self.lines.line(written), format_location(written), message)
