"""Dataset loading (SPEC §1): validation, semantic checks (duplicate ids, code judges that cannot
run, prompt templates), warnings, and the prepared cases — with AgentV's defaults: a case's
`rubrics:` become a `rubric` evaluator placed first, and a case left without evaluators gets
AgentV's default `llm_judge`.

`load_dataset` is exactly what `agentv validate` runs: it collects every problem in the file
(structure, types, unknown keys, duplicate ids, missing files, evaluator config) before raising.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentv_py.errors import ConfigError, Problem
from agentv_py.loading.case_files import raw_cases, resolve_case_files
from agentv_py.loading.case_spool import CaseSpool
from agentv_py.loading.config import GuidelineConfig, load_guideline_config
from agentv_py.loading.conversation_turns import prepared_turns, turn_ground_truths
from agentv_py.loading.date_warnings import ambiguous_truth_dates
from agentv_py.loading.evaluator_lists import (
    DEFAULT_JUDGE,
    added_evaluators,
    evaluator_lists,
    nothing_to_compare,
    walk_evaluators,
)
from agentv_py.loading.ground_truth import (
    GroundTruthError,
    GroundTruthFields,
    finite_problems,
    ground_truth_location,
    read_ground_truth,
)
from agentv_py.loading.jsonl import is_jsonl, read_jsonl
from agentv_py.loading.judge_checks import unrunnable_judges
from agentv_py.loading.overrides import merge_case_evaluators
from agentv_py.loading.source import Source, read_yaml, split_cases, unpack_cases
from agentv_py.loading.truth_files import TruthFiles, truth_file
from agentv_py.loading.validation import validate
from agentv_py.locate import search_dirs
from agentv_py.models.base import suggest
from agentv_py.models.dataset import Dataset
from agentv_py.models.evaluators import CompositeConfig, EvaluatorConfig, aggregator_template_problem
from agentv_py.models.fields import FieldAccuracyConfig
from agentv_py.models.judges import LlmJudgeConfig
from agentv_py.prepared import CaseModels, LoadedDataset, PreparedCase, PreparedCases
from agentv_py.prompts import read_prompt_template
from agentv_py.scoring.paths import path_problem


def load_dataset(path: str | Path, *, flagged_only: bool = False) -> LoadedDataset:
    """Load and validate a dataset file (YAML, or JSONL with its sidecar); raise ConfigError
    listing every problem found.

    The cases are parsed packed (`read_yaml(pack_cases=True)`) and then validated, checked and
    prepared a chunk (`PreparedCases.chunk_cases`) at a time, each chunk with the suite keys, by the same checks
    a whole file gets; prepared chunks go to `PreparedCases`. Checks across cases (duplicate ids,
    gates, fields no case's ground truth has) keep what they need between chunks. So memory does
    not grow with the number of cases, and every problem of the file is still found before a run.
    `flagged_only` (`agentv validate`, which runs no case): only the cases the checks before a run
    read back are kept (`PreparedCases(flagged_only=True)`)."""
    dataset_path = Path(path).resolve() if Path(path).exists() else Path(path)
    # A YAML file, or a JSONL file (+ sidecar) read into the same structure: one set of checks.
    source, raw = read_jsonl(Path(path)) if is_jsonl(Path(path)) else read_yaml(Path(path), pack_cases=True)
    guideline_config = load_guideline_config(Path(path).resolve().parent)  # `.agentv/config.yaml`
    problems: list[Problem] = []
    warnings: list[Problem] = []
    if isinstance(raw, dict) and ("tests" in raw or "agentv_format" in raw):  # AgentV v4.42's format, or
        # a format named: read by `loading.agentv_442`, imported only for such a file
        from agentv_py.loading.agentv_442 import translate
        from agentv_py.loading.written_paths import TranslatedSource

        translated = translate(_unpacked(raw), dataset_path, source)
        translated_source = TranslatedSource.of(source, translated.paths, translated.cases_key)
        problems = [translated_source.written_problem(*problem) for problem in translated.problems]
        problems += translated.located
        warnings = [translated_source.written_problem(*warning) for warning in translated.warnings]
        source, raw = translated_source, translated.raw
        if translated.located and not raw.get("evalcases"):  # no case could be read: nothing more to say
            raise ConfigError(problems)
    loading = _Loading(source, dataset_path.resolve().parent, guideline_config.config, flagged_only)
    loading.stages[0].extend(problems)
    loading.warnings.extend(warnings)
    split = split_cases(raw)
    if split is None:
        loading.add(raw, 0)  # not a mapping with a list of cases: one pass says what is wrong
    else:
        suite, packed = split
        size = PreparedCases.chunk_cases
        for start in range(0, max(len(packed), 1), size):
            loading.add({**suite, "evalcases": unpack_cases(packed[start : start + size])}, start)
        del packed, raw, split  # only the current chunk is held
    return loading.finish(dataset_path, guideline_config.problems, guideline_config.warnings)


def _unpacked(raw: dict[str, Any]) -> dict[str, Any]:
    """A parsed dataset whose packed `evalcases` (`read_yaml(pack_cases=True)`) are unpacked."""
    cases = raw.get("evalcases")
    return {**raw, "evalcases": unpack_cases(cases)} if isinstance(cases, (tuple, CaseSpool)) else raw


class _Loading:
    """One dataset being loaded, a chunk of cases at a time (`load_dataset`). Problems are kept
    by stage — structure and files, then ground truth, then judges and prompts — and the first
    stage with any is raised, as a whole-file load would; a chunk stops at its first failing stage.
    A later chunk reports only problems located in its cases (the suite's are the first chunk's)."""

    def __init__(
        self, source: Source, dataset_dir: Path, guidelines: GuidelineConfig | None, flagged_only: bool = False
    ) -> None:
        self.source = source
        self.flagged_only = flagged_only
        self.dataset_dir = dataset_dir
        self.guidelines = guidelines
        self.stages: tuple[list[Problem], list[Problem], list[Problem]] = ([], [], [])
        self.first_seen: dict[str, int] = {}
        self.model: Dataset | None = None
        self.dated: set[str] = set()  # date fields warned about for ambiguous expected dates
        self.truth_files = TruthFiles(dataset_dir)
        self.all_valid = True  # every chunk's model validated (the gate checks need all of them)
        self.suite: list[EvaluatorConfig] = []
        self.cases: PreparedCases | None = None
        self.warnings: list[Problem] = []
        self.truth_fields = GroundTruthFields()
        self.scored_fields: dict[str, None] = {}
        self.evaluator_names: dict[str, None] = {}

    def add(self, raw: Any, offset: int) -> None:
        source = self.source.shifted(offset)
        first = offset == 0

        def own(problems: list[Problem]) -> list[Problem]:
            return problems if first else [p for p in problems if source.of_a_case(p)]

        model, problems = validate(source, raw, Dataset)
        problems += self._duplicates(raw, offset) + (merge_case_evaluators(source, model) if model else [])
        # File resolution needs the raw case list even when the model failed, so every problem shows.
        resolved, file_problems = resolve_case_files(source, raw, self.dataset_dir, self.guidelines)
        problems = own(problems + file_problems)
        if model is None:
            self.all_valid = False
        if problems or model is None or self.stages[0]:
            self.stages[0].extend(problems)
            return
        if first:
            self.model = model
        _scored_fields(model.execution.evaluators if first else [], self.scored_fields)
        for case in model.evalcases:
            _scored_fields(case.case_evaluators, self.scored_fields)
        truths, truth_problems = _ground_truths(source, raw, model, self.truth_files)
        turn_truths, turn_problems = turn_ground_truths(source, model)
        truth_problems += turn_problems
        suite = self.model.execution.evaluators if self.model is not None else []
        truth_problems += [
            source.problem(["evalcases", i], message) for i, message in nothing_to_compare(model, truths, suite)
        ]
        if truth_problems or self.stages[1]:
            self.stages[1].extend(truth_problems)
            return
        judge_problems = unrunnable_judges(source, model, self.dataset_dir)
        evaluators, prompt_problems = _resolve_prompts(source, model, self.dataset_dir)
        judge_problems = own(judge_problems + prompt_problems)
        if judge_problems or self.stages[2]:
            self.stages[2].extend(judge_problems)
            return
        if first:
            self.suite = evaluators[("execution",)]
            # Without suite evaluators every case may get the default judge: all are read back.
            self.cases = PreparedCases(
                [*self.suite, DEFAULT_JUDGE], flagged_only=self.flagged_only and bool(self.suite)
            )
        assert self.cases is not None
        self.warnings += own(_path_warnings(source, model)) + _ignored_keys(source, model)
        self.warnings += ambiguous_truth_dates(source, model, truths, suite, self.dated)
        self.truth_fields.add(model, truths, offset)
        added: dict[int, list[EvaluatorConfig]] = {}  # the rubric evaluator first, or the default judge alone
        for i, _, config in added_evaluators(model, turns=False):
            added.setdefault(i, []).append(config)
        chunk = [
            PreparedCase(
                case=case,
                index=offset + i,
                files=resolved.get((i, "file"), []),
                images=resolved.get((i, "image"), []),
                expected=truths[i],
                question=case.question,
                evaluators=[*added.get(i, []), *evaluators.get(("evalcases", i), self.suite)],
                guideline_files=resolved.get((i, "guideline"), []),
                guideline_items=frozenset(resolved.get((i, "guideline_item"), [])),
                turns=prepared_turns(case, i, evaluators, turn_truths),
            )
            for i, case in enumerate(model.evalcases)
        ]
        for prepared in chunk:
            for config in prepared.evaluators:
                self.evaluator_names.setdefault(config.display_name, None)
        self.cases.add(chunk)

    def _duplicates(self, raw: Any, offset: int) -> list[Problem]:
        """Duplicate ids, across every chunk (located in the file, as `source.shifted` is not)."""
        problems: list[Problem] = []
        for i, case in enumerate(raw_cases(raw), offset):
            case_id = case.get("id") if isinstance(case, dict) else None
            if not isinstance(case_id, str):
                continue
            if case_id in self.first_seen:
                problems.append(
                    self.source.problem(
                        ["evalcases", i, "id"],
                        f"duplicate id '{case_id}' (first used by evalcases[{self.first_seen[case_id]}]); "
                        "ids must be unique",
                    )
                )
            else:
                self.first_seen[case_id] = i
        return problems

    def finish(
        self, dataset_path: Path, config_problems: list[Problem], config_warnings: list[Problem]
    ) -> LoadedDataset:
        structure, truths, judges = self.stages
        if self.all_valid and self.model is not None:
            structure.extend(self._field_gate_problems(self.model))
        if structure or config_problems:
            raise ConfigError(config_problems + _sorted(structure))
        if truths:
            raise ConfigError(_sorted(truths))
        if judges:
            raise ConfigError(judges)
        assert self.model is not None and self.cases is not None
        gate_problems = self._evaluator_gate_problems(self.model) + self.truth_fields.errors(self.source)
        if gate_problems:
            raise ConfigError(gate_problems)
        warnings = config_warnings + _sorted(self.warnings + self.truth_fields.warnings(self.source))
        model = self.model.model_copy(update={"evalcases": CaseModels(self.cases)})
        name = model.dataset or dataset_path.stem
        return LoadedDataset(dataset_path.resolve(), name, model, self.cases, warnings, self.source)

    def _field_gate_problems(self, model: Dataset) -> list[Problem]:
        """A field gate must name a field some `field_accuracy` evaluator scores: else it could never pass."""
        if model.gates is None:
            return []
        named = ", ".join(self.scored_fields) if self.scored_fields else "none (no field_accuracy evaluator)"
        return [
            self.source.problem(
                ["gates", "fields", path],
                f"names field '{path}', which no field_accuracy evaluator scores (fields scored: {named})",
            )
            for path in model.gates.fields
            if path not in self.scored_fields
        ]

    def _evaluator_gate_problems(self, model: Dataset) -> list[Problem]:
        """A `gates.evaluators` entry must name an evaluator some case runs (its `name`, else its
        type, as results name it): else the gate could never pass."""
        if model.gates is None or not model.gates.evaluators:
            return []
        names = list(self.evaluator_names)
        problems = []
        for name in model.gates.evaluators:
            if name not in names:
                close = suggest(name, names)
                hint = f" (did you mean '{close}'?)" if close else ""
                problems.append(
                    self.source.problem(
                        ["gates", "evaluators", name],
                        f"names evaluator '{name}', which no case runs{hint}; evaluators: {', '.join(names)}",
                    )
                )
        return problems


def _sorted(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.line or 0, p.location))


def _scored_fields(evaluators: Sequence[EvaluatorConfig] | None, into: dict[str, None]) -> None:
    """The field paths `field_accuracy` evaluators score (composites' members included)."""
    for config in evaluators or []:
        if isinstance(config, FieldAccuracyConfig):
            for label in config.labels():
                into.setdefault(label, None)
        elif isinstance(config, CompositeConfig):
            _scored_fields(config.evaluators, into)


def _ground_truths(source: Source, raw: Any, model: Dataset, files: TruthFiles) -> tuple[list[Any], list[Problem]]:
    """Each case's expected value (JSON text parsed; a file it names read, `truth_files`), and the
    problems of values no evaluator could use: NaN, infinities, JSON text that is too deep or holds
    an integer Python cannot, a ground-truth file that is missing, outside the project or too big."""
    cases = raw_cases(raw)
    truths: list[Any] = []
    problems: list[Problem] = []
    for i, case in enumerate(model.evalcases):
        named = truth_file(case.expected_value)
        try:
            value = files.read(named, f"case '{case.id}'") if named else case.expected_value
            truths.append(read_ground_truth(value))
        except GroundTruthError as exc:
            truths.append(None)
            where = ground_truth_location(cases[i] if i < len(cases) else None, i)
            problems.append(source.problem([*where, 0, "value"] if named else where, str(exc)))
    problems.extend(finite_problems(source, cases, truths))
    return truths, _sorted(problems)


def _ignored_keys(source: Source, model: Dataset) -> list[Problem]:
    """Case keys AgentV accepted and ignored: accepted here too, with a warning saying so."""
    warnings: list[Problem] = []
    for i, case in enumerate(model.evalcases):
        if case.execution is not None and case.execution.target is not None:
            warnings.append(
                source.problem(
                    ["evalcases", i, "execution", "target"],
                    f"ignored: every case runs on the eval's one target (--target, else the dataset's "
                    f"execution.target), as in AgentV, which ignored a case's target too ('{case.execution.target}')",
                )
            )
        if "reference_answer" in case.model_fields_set:
            warnings.append(
                source.problem(
                    ["evalcases", i, "reference_answer"],
                    "ignored, as AgentV ignored it: judges get the last expected message as the reference "
                    "answer; give it as expected_output",
                )
            )
    return warnings


ListKey = tuple[str | int, ...]  # ("execution",): the suite's; ("evalcases", i): a case's; (..., "turns", t): a turn's


def _resolve_prompts(
    source: Source, model: Dataset, dataset_dir: Path
) -> tuple[dict[ListKey, list[EvaluatorConfig]], list[Problem]]:
    """Every evaluator list with prompt-file templates read: an `llm_judge` whose prompt names a
    file is replaced by a new config holding the template (`with_template`), so a run reads each
    template once and no validated config is changed afterwards; a composite is replaced by one
    with its members and its llm_judge aggregator resolved the same way. Missing, unreadable and
    invalid templates are problems."""
    problems: list[Problem] = []
    lists: dict[ListKey, list[EvaluatorConfig]] = {}
    dirs = search_dirs(dataset_dir)

    def resolved(config: EvaluatorConfig, where: list[str | int]) -> EvaluatorConfig:
        if isinstance(config, CompositeConfig):
            members = [resolved(member, [*where, "evaluators", m]) for m, member in enumerate(config.evaluators)]
            aggregator = config.aggregator
            if aggregator.prompt_file is not None:
                text, problem = read_prompt_template(
                    aggregator.prompt_file, dataset_dir, dirs, check=aggregator_template_problem
                )
                if problem is not None:
                    problems.append(source.problem([*where, "aggregator", "prompt"], problem))
                elif text is not None:
                    aggregator = aggregator.with_template(text)
            return config.with_parts(members, aggregator)
        if not isinstance(config, LlmJudgeConfig) or config.prompt_file is None:
            return config
        text, problem = read_prompt_template(config.prompt_file, dataset_dir, dirs)
        if problem is not None:
            problems.append(source.problem([*where, "prompt"], problem))
        return config.with_template(text) if text is not None else config

    for base, evaluators in evaluator_lists(model):
        key: ListKey = ("execution",) if base[0] == "execution" else ("evalcases", int(base[1]))
        if "turns" in base:  # a conversation turn's own list
            key = (*key, "turns", int(base[base.index("turns") + 1]))
        lists[key] = [resolved(config, [*base, e]) for e, config in enumerate(evaluators)]
    return lists, problems


def _path_warnings(source: Source, model: Dataset) -> list[Problem]:
    """Malformed field paths resolve to "missing" at run time; say so once, at load time. Also
    the `weight` of a composite member, which its composite ignores (as AgentV did)."""
    warnings = []
    for where, evaluator in walk_evaluators(model):
        if isinstance(evaluator, CompositeConfig):
            for m, member in enumerate(evaluator.evaluators):
                if "weight" in member.model_fields_set:
                    warnings.append(
                        source.problem(
                            [*where, "evaluators", m, "weight"],
                            "ignored: a composite weighs its members by aggregator.weights (default 1), as AgentV did",
                        )
                    )
        if not isinstance(evaluator, FieldAccuracyConfig):
            continue
        for f, spec in enumerate(evaluator.fields):
            reason = path_problem(spec.path)
            if reason:
                warnings.append(
                    source.problem([*where, "fields", f, "path"], f"{reason}; the field will always be missing")
                )
    return warnings
