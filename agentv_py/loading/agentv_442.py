"""AgentV v4.42's dataset format (`tests:`) read into this tool's model (`evalcases:`).

The rule (docs/agentv-compat.md, "Two formats"): a file whose cases are under `tests:` is written
in AgentV v4.42's format, one whose cases are under `evalcases:` in the early-2026 format. The
format decides the vocabulary and two meanings: whether a case's graders replace the suite's
(early 2026) or are added before them unless the case says `execution.skip_defaults: true`
(v4.42), and which payload a code grader gets. `agentv_format: "2026-02"` or `"4.42"` at the top
of a file chooses the meanings whatever the vocabulary.

`translate` rewrites the parsed file into the internal vocabulary before it is validated, and
records where each internal key was written (`WrittenPaths`), so every later problem still points
at the user's line and key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_py.errors import Problem
from agentv_py.loading.agentv_case_files import is_file_reference, read_case_files
from agentv_py.loading.agentv_graders import GraderReader
from agentv_py.loading.agentv_turns import conversation
from agentv_py.loading.agentv_values import (
    agentv_metadata,
    default_name,
    expected_messages,
    input_messages,
    render,
    strings_containing,
)
from agentv_py.loading.source import Source
from agentv_py.loading.written_paths import Path_, WrittenPaths
from agentv_py.models.agentv_vocabulary import (
    CASE_INFORMATIONAL,
    CASE_KEPT,
    CASE_KEYS,
    CASE_REFUSED,
    CASE_WARNED,
    CONVERSATION_KEYS,
    EARLY_2026,
    EXECUTION_HANDLED,
    EXECUTION_IGNORED,
    FORMAT_KEY,
    FORMATS,
    GRADER_KEYS,
    MAIN_BRANCH_CASE,
    MAIN_BRANCH_TOP,
    TOP_INFORMATIONAL,
    TOP_KEPT,
    TOP_KEYS,
    TOP_REFUSED,
    TOP_WARNED,
    V4_42,
    main_branch,
)
from agentv_py.models.base import suggest


@dataclass
class Translated:
    raw: dict[str, Any]
    paths: WrittenPaths
    cases_key: str  # where the file's cases are written: `tests` or `evalcases`
    problems: list[tuple[Source | None, Path_, str]] = field(default_factory=list)  # (file, where written, what)
    warnings: list[tuple[Source | None, Path_, str]] = field(default_factory=list)
    located: list[Problem] = field(default_factory=list)  # problems of case files, located in them


def translate(raw: dict[str, Any], dataset_path: Path, source: Source) -> Translated:
    """`raw` (the parsed dataset at `dataset_path`, read by `source`) in the internal vocabulary."""
    return _Translation(raw, dataset_path, source).run()


class _Translation:
    def __init__(self, raw: dict[str, Any], dataset_path: Path, source: Source) -> None:
        self.raw = raw
        self.dataset_path = dataset_path
        self.source = source
        self.cases: list[Any] = []
        self.located: list[Problem] = []  # problems of case files, located in them
        self.paths = WrittenPaths()
        self.problems: list[tuple[Source | None, Path_, str]] = []
        self.warnings: list[tuple[Source | None, Path_, str]] = []
        self.cases_key = "tests" if "tests" in raw else "evalcases"
        self.semantics = self._semantics()
        execution = raw.get("execution")
        self.execution: dict[str, Any] = execution if isinstance(execution, dict) else {}
        threshold = self.execution.get("threshold")
        self.graders = GraderReader(self.paths, self.semantics, threshold if _number(threshold) else None)

    def problem(self, where: Path_, message: str) -> None:
        """A problem at `where` as written, in the file being read (`paths.source`; None: the dataset)."""
        self.problems.append((self.paths.source, where, message))

    def warning(self, where: Path_, message: str) -> None:
        self.warnings.append((self.paths.source, where, message))

    def _environment_references(self, value: Any, where: Path_) -> None:
        """AgentV v4.42 filled `${{ NAME }}` in any string of a dataset from the environment; here
        a dataset is data and never reads the environment (docs/security.md): each is refused."""
        for found, _ in strings_containing(value, "${{", where):
            self.problem(
                found,
                "${{ NAME }} is not filled in a dataset: its values are data and never read the environment "
                "(AgentV v4.42 filled it); write the value, or keep variables in the targets file",
            )

    def _unknown(self, where: Path_, key: str, known: list[str]) -> None:
        """A key v4.42 does not know: a problem when it looks like a known key mistyped, else a
        warning (AgentV warned and went on: a YAML anchor holder such as `defaults:` is common)."""
        close = suggest(key, known)
        if close is not None:
            self.problem(where, f"unknown key '{key}' (did you mean '{close}'?)")
        else:
            self.warning(where, f"unknown key '{key}', ignored (as AgentV v4.42 ignores it)")

    def _semantics(self) -> str:
        given = self.raw.get(FORMAT_KEY)
        if given is None:
            return V4_42 if self.cases_key == "tests" else EARLY_2026
        if given not in FORMATS:
            self.problem(
                (FORMAT_KEY,),
                f'{FORMAT_KEY} is "{EARLY_2026}" (AgentV\'s early-2026 meanings) or "{V4_42}" '
                f"(AgentV v4.42's), got {given!r}",
            )
            return V4_42 if self.cases_key == "tests" else EARLY_2026
        return str(given)

    def run(self) -> Translated:
        raw = self.raw
        if "tests" in raw and ("evalcases" in raw or "eval_cases" in raw):
            other = "evalcases" if "evalcases" in raw else "eval_cases"
            self.problem(
                (other,),
                f"give the cases either under 'tests' (AgentV v4.42's format) or under '{other}' "
                "(the early-2026 format), not both",
            )
        out: dict[str, Any] = {}
        execution_out: dict[str, Any] = {}
        for key, value in raw.items():
            if key in TOP_KEPT:
                out[key] = value
            elif key == "name":
                self._name(value, out)
            elif key in TOP_REFUSED:
                self.problem((key,), TOP_REFUSED[key])
            elif key in TOP_WARNED:
                self.warning((key,), TOP_WARNED[key])
            elif key == "execution":
                self._execution(value, execution_out, out)
            elif key in (*TOP_INFORMATIONAL, FORMAT_KEY, "tests", "evalcases", "input", "input_files", *GRADER_KEYS):
                continue
            elif key == "threshold" and "threshold" not in self.execution:
                out["pass_threshold"] = value  # AgentV 5.1's spelling of execution.threshold: same meaning
                self.paths.record(("pass_threshold",), ("threshold",))
            elif key in MAIN_BRANCH_TOP:
                self.problem((key,), main_branch(key, MAIN_BRANCH_TOP))
            else:
                self._unknown((key,), key, TOP_KEYS)
        if "name" not in raw and "dataset" not in raw:
            out["dataset"] = default_name(self.dataset_path)
        suite = self._suite_graders()
        if suite is not None:
            execution_out["evaluators"] = suite
        if execution_out:
            out["execution"] = execution_out
        self.paths.record(("evalcases",), (self.cases_key,))
        out["evalcases"] = self._cases(raw.get(self.cases_key), suite)
        for key in ("name", "target", "input", "input_files", *GRADER_KEYS):  # the suite's keys that are read
            if key in raw:
                self._environment_references(raw[key], (key,))
        for key in ("target", *GRADER_KEYS):
            if key in self.execution:
                self._environment_references(self.execution[key], ("execution", key))
        problems = self.problems + self.graders.problems
        return Translated(out, self.paths, self.cases_key, problems, self.warnings, self.located)

    def _name(self, value: Any, out: dict[str, Any]) -> None:
        if "dataset" in self.raw:
            self.problem(("name",), "give the suite's name either as 'name' or as 'dataset', not both")
            return
        out["dataset"] = value.strip() if isinstance(value, str) and value.strip() else value
        self.paths.record(("dataset",), ("name",))

    def _execution(self, value: Any, execution_out: dict[str, Any], out: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            self.problem(("execution",), "execution is a mapping")
            return
        for key, item in value.items():
            if key in ("target", "judge_target", "date_order", "cache"):
                execution_out[key] = item
            elif key == "threshold":
                out["pass_threshold"] = item
                self.paths.record(("pass_threshold",), ("execution", "threshold"))
            elif key in GRADER_KEYS:
                continue  # `_suite_graders`
            elif key in EXECUTION_IGNORED:
                why = EXECUTION_IGNORED[key]
                if why is not None:
                    self.warning(("execution", key), why)
            else:
                valid = sorted({*EXECUTION_HANDLED, *EXECUTION_IGNORED})
                close = suggest(key, valid)
                hint = f" (did you mean '{close}'?)" if close else ""
                self.problem(("execution", key), f"unknown key '{key}'{hint}")
        targets = value.get("targets")
        if "target" not in value and isinstance(targets, list) and targets:
            first = targets[0]
            name = first.get("name") if isinstance(first, dict) else first
            if isinstance(name, str):
                execution_out["target"] = name

    def _suite_graders(self) -> list[Any] | None:
        """The suite's graders: top-level `assertions` (or `assert`), else `execution.assertions`
        (or `assert`, `evaluators`); more than one of them is a problem."""
        given: list[Path_] = [(k,) for k in GRADER_KEYS if k in self.raw]
        given += [("execution", k) for k in GRADER_KEYS if k in self.execution]
        if not given:
            return None
        if len(given) > 1:
            shown = ", ".join(".".join(str(p) for p in where) for where in given)
            self.problem(given[1], f"give the suite's graders once (found {shown})")
        where = given[0]
        value = self.raw[str(where[0])] if len(where) == 1 else self.execution[str(where[1])]
        return self.graders.read_list(value, ("execution", "evaluators"), where)

    def _cases(self, value: Any, suite: list[Any] | None) -> Any:
        """The cases: listed here, read from `file://` entries of the list, or from the file or
        directory the whole `tests:` value names (`agentv_case_files`)."""
        if isinstance(value, str):
            self._read_cases(value, (self.cases_key,), suite, whole_list=True)
            return self.cases
        if not isinstance(value, list):
            return value  # the model says what is wrong
        for j, entry in enumerate(value):
            if is_file_reference(entry):
                self._read_cases(entry, (self.cases_key, j), suite, whole_list=False)
            else:
                self.cases.append(self._case(entry, (self.cases_key, j), suite))
        return self.cases

    def _read_cases(self, reference: str, written: Path_, suite: list[Any] | None, whole_list: bool) -> None:
        def located(message: str) -> Problem:
            return self.source.problem(list(written), message)

        read = read_case_files(reference, self.dataset_path.parent, located, whole_list=whole_list)
        self.located += read.problems
        for case, origin in zip(read.cases, read.origins, strict=True):
            self.paths.source = origin.source
            self.cases.append(self._case(case, origin.path, suite))
        self.paths.source = None

    def _case(self, case: Any, written: Path_, suite: list[Any] | None) -> Any:
        internal: Path_ = ("evalcases", len(self.cases))
        self.paths.record(internal, written)
        if not isinstance(case, dict):
            return case
        read = {key: value for key, value in case.items() if key not in CASE_INFORMATIONAL and key not in CASE_WARNED}
        self._environment_references(read, written)
        variables = case.get("vars")
        if variables is not None and not isinstance(variables, dict):
            self.problem((*written, "vars"), "vars is a mapping of names to values")
            variables = None
        execution = case.get("execution")
        execution = execution if isinstance(execution, dict) else {}
        skip_defaults = execution.get("skip_defaults") is True
        out: dict[str, Any] = {}
        for key, item in case.items():
            if key in CASE_KEPT:
                out[key] = render(item, variables) if key in ("criteria", "expected_outcome") else item
            elif key in CASE_REFUSED:
                self.problem((*written, key), CASE_REFUSED[key])
            elif key in CASE_WARNED:
                self.warning((*written, key), CASE_WARNED[key])
            elif key == "expected_output":
                out[key] = expected_messages(render(item, variables))
            elif key == "execution":
                self._case_execution(item, written, out)
            elif key == "metadata":  # written on the case's rows (`agentv metrics --by KEY`)
                out[key] = agentv_metadata(item)
            elif key in (*CASE_INFORMATIONAL, *CONVERSATION_KEYS, "input", "input_files", *GRADER_KEYS):
                continue
            elif key in MAIN_BRANCH_CASE:
                self.problem((*written, key), main_branch(key, MAIN_BRANCH_CASE))
            else:
                self._unknown((*written, key), key, CASE_KEYS)
        self._input(case, variables, skip_defaults, internal, written, out)
        multi_turn = conversation(
            case, variables, self.graders, self.paths, self.problem, self.warning, internal, written
        )
        if multi_turn is not None:
            out["conversation"] = multi_turn
        own = self._own_graders(case, execution, internal, written)
        if self.semantics == V4_42 and suite and not skip_defaults and own is not None:
            for k in range(len(suite)):  # the suite's graders, located where the suite wrote them
                self.paths.same_as((*internal, "evaluators", len(own) + k), ("execution", "evaluators", k))
            own = [*own, *suite]
        elif self.semantics == V4_42 and skip_defaults and own is None and suite:
            own = []
        if own is not None:
            out["evaluators"] = own
        return out

    def _case_execution(self, value: Any, written: Path_, out: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            self.problem((*written, "execution"), "execution is a mapping")
            return
        kept = {}
        for key, item in value.items():
            if key == "target":
                kept[key] = item
            elif key == "skip_defaults":
                if not isinstance(item, bool):
                    self.problem((*written, "execution", key), f"skip_defaults is true or false, got {item!r}")
            elif key in GRADER_KEYS:
                continue
            elif key == "threshold":
                self.problem(
                    (*written, "execution", key),
                    "a case's own pass mark is not supported: set execution.threshold "
                    "for the suite, or give the case's graders `required`/`min_score`",
                )
            else:
                close = suggest(key, ["target", "skip_defaults", "threshold", *GRADER_KEYS])
                hint = f" (did you mean '{close}'?)" if close else ""
                self.problem((*written, "execution", key), f"unknown key '{key}'{hint}")
        if kept:
            out["execution"] = kept

    def _own_graders(
        self, case: dict[str, Any], execution: dict[str, Any], internal: Path_, written: Path_
    ) -> list[Any] | None:
        given: list[Path_] = [(k,) for k in GRADER_KEYS if k in case]
        given += [("execution", k) for k in GRADER_KEYS if k in execution]
        if not given:
            return None
        if len(given) > 1:
            shown = ", ".join(".".join(str(p) for p in where) for where in given)
            self.problem((*written, *given[1]), f"give the case's graders once (found {shown})")
        where = given[0]
        value = case[str(where[0])] if len(where) == 1 else execution[str(where[1])]
        return self.graders.read_list(value, (*internal, "evaluators"), (*written, *where))

    def _input(
        self,
        case: dict[str, Any],
        variables: dict[str, Any] | None,
        skip_defaults: bool,
        internal: Path_,
        written: Path_,
        out: dict[str, Any],
    ) -> None:
        """The case's input messages: the suite's `input` first (unless `skip_defaults`), then the
        case's; `input_files` (the case's, else the suite's) with a text `input` make one user
        message of file items and the text (AgentV's shorthands)."""
        suite_input = None if skip_defaults else self.raw.get("input")
        suite_files = None if skip_defaults else self.raw.get("input_files")
        files = case.get("input_files", suite_files)
        text = render(case.get("input"), variables)
        messages: list[Any] = []
        if suite_input is not None:
            messages.extend(input_messages(render(suite_input, variables)))
            for j in range(len(messages)):
                self.paths.record_in(None, (*internal, "input", j), ("input",))
        start = len(messages)
        if files is not None:
            own = "input_files" in case
            where = (*written, "input_files") if own else ("input_files",)
            in_file = self.paths.source if own else None  # the suite's are the dataset's
            files = render(files, variables)
            if not (isinstance(files, list) and files and all(isinstance(f, str) for f in files)):
                self.problems.append((in_file, where, "input_files is a list of file paths"))
            elif not isinstance(text, str):
                self.problems.append(
                    (in_file, where, "input_files needs the case's input to be text (one user message)")
                )
            else:
                content = [*({"type": "file", "value": f} for f in files), {"type": "text", "value": text}]
                messages.append({"role": "user", "content": content})
                self.paths.record_in(in_file, (*internal, "input", start), where)
        elif text is not None:
            messages.extend(input_messages(text))
            for j in range(start, len(messages)):
                self.paths.record(
                    (*internal, "input", j),
                    (*written, "input", j - start) if isinstance(text, list) else (*written, "input"),
                )
        if messages:
            out["input"] = messages


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
