"""AgentV v4.42's dataset vocabulary: every key of a dataset and what this tool does with it
(`loading.agentv_442`: kept as the internal model has it, read for the record only, refused with
the reason, or accepted with a warning saying what is not carried out), its grader types and this
tool's for each, and AgentV's main-branch (5.x) syntax with what to write instead. The loader and
the JSON Schema (`agentv schema`) read these tables; docs/agentv-compat.md has them for people."""

from __future__ import annotations

FORMAT_KEY = "agentv_format"
EARLY_2026 = "2026-02"
V4_42 = "4.42"
FORMATS = (EARLY_2026, V4_42)

GRADER_KEYS = ("assertions", "assert", "evaluators")

# Top-level keys: kept as they are, read for the record only, or not carried out (with why).
TOP_KEPT = ("$schema", "description", "target", "gates", "pass_threshold", "dataset", "evaluator", "preprocessors")
TOP_INFORMATIONAL = ("category", "version", "author", "tags", "license", "requires", "metadata", "governance")
TOP_REFUSED: dict[str, str] = {}
TOP_WARNED = {
    "workspace": "AgentV's workspace (repositories, templates, lifecycle hooks) is not set up by this tool: "
    "the target runs in its own working directory",
}
EXECUTION_HANDLED = ("target", "judge_target", "date_order", "cache", "threshold", *GRADER_KEYS)
EXECUTION_IGNORED = {
    "workers": None,  # concurrency: `agentv eval --workers`
    "fail_on_error": None,
    "max_concurrency": None,
    "trials": "trials are not run: each case runs once",
    "budget_usd": "the suite budget is not enforced",
    "targets": "one target runs per run: the first of execution.targets unless --target names another",
}

CASE_KEPT = (
    "id",
    "criteria",
    "expected_outcome",
    "conversation_id",
    "rubrics",
    "note",
    "description",
    "skip",
    "xfail",
    "extend_evaluators",
    "reference_answer",
    "evaluator",
    "input_messages",
    "expected_messages",
)
CASE_INFORMATIONAL = ("metadata", "suite", "vars", "dataset")
CASE_REFUSED = {
    "depends_on": "case dependencies (depends_on) are not supported: every case runs on its own",
    "on_dependency_failure": "case dependencies (depends_on) are not supported: every case runs on its own",
}
CONVERSATION_KEYS = ("mode", "turns", "aggregation", "on_turn_failure", "window_size")  # a multi-turn case
TURN_KEYS = ("input", "expected_output", "assertions")  # a turn of one
CASE_WARNED = {
    "workspace": TOP_WARNED["workspace"],
    "targets": "a case's own targets are ignored: one target runs per run",
}
CASE_KEYS = sorted(
    {
        *CASE_KEPT,
        *CASE_INFORMATIONAL,
        *CASE_REFUSED,
        *CASE_WARNED,
        *CONVERSATION_KEYS,
        "input",
        "input_files",
        "expected_output",
        "execution",
        *GRADER_KEYS,
    }
)
TOP_KEYS = sorted(
    {
        *TOP_KEPT,
        *TOP_INFORMATIONAL,
        *TOP_REFUSED,
        *TOP_WARNED,
        FORMAT_KEY,
        "name",
        "tests",
        "evalcases",
        "execution",
        "input",
        "input_files",
        *GRADER_KEYS,
    }
)

# AgentV's main-branch syntax (5.x, after v4.42.4): the release that brought it and what to write
# in v4.42's format instead. Refused with one line (docs/agentv-compat.md, "Main-branch syntax").
_INPUT = "give each test its `input:` (or the suite one `input:`)"
MAIN_BRANCH_TOP: dict[str, tuple[str, str]] = {
    "prompts": ("5.1.0", _INPUT),
    "default_test": ("5.1.0", "put the suite's graders under `assertions:` and its shared input under `input:`"),
    "evaluate_options": ("5.1.0", "write `execution: {threshold: ...}`; concurrency is `agentv eval --workers`"),
    "graders": ("5.1.0", "list the suite's graders under `assertions:`"),
    "imports": ("5.1.0", "list cases under `tests:` (a `file://` entry reads another case file)"),
    "targets": ("5.1.0", "name the target in `execution: {target: NAME}` (one per run; --target picks another)"),
    "repeat": ("5.1.0", "each case runs once here (v4.42 wrote `execution.trials`, not run either)"),
    "runs": ("5.1.0", "each case runs once here (v4.42 wrote `execution.trials`, not run either)"),
    "early_exit": ("5.1.0", "each case runs once here"),
    "extensions": ("5.1.0", "lifecycle hooks are not run here: prepare the target's environment before the run"),
    "environment": ("5.2.0", "workspaces are not set up here: prepare the target's environment before the run"),
    "env": ("5.1.0", "set provider variables in the targets file (`${{ NAME }}`) or the environment"),
    "scenarios": ("5.1.0", "write each scenario as cases under `tests:`"),
    "derived_metrics": ("5.1.0", "use `agentv metrics` on the results"),
    "on_run_complete": ("5.1.0", "run the step after `agentv eval` in your CI"),
    "nunjucks_filters": ("5.1.0", _INPUT),
    "output_path": ("5.1.0", "use `agentv eval --out FILE`"),
    "policy": ("5.1.0", "remove it (AgentV v4.42 had no policy)"),
    "experiment": ("5.1.0", "remove it (AgentV v4.42 had no experiment)"),
    "model": ("5.1.0", "name the target in `execution: {target: NAME}`"),
    "timeout_seconds": ("5.1.0", "set `timeout_seconds` on the target in the targets file"),
}
MAIN_BRANCH_CASE: dict[str, tuple[str, str]] = {
    "prompts": ("5.1.0", "give the test its `input:`"),
    "provider": ("5.1.0", "one target runs per run: `agentv eval --target NAME`"),
    "providers": ("5.1.0", "one target runs per run: `agentv eval --target NAME`"),
    "provider_output": ("5.1.0", "give the answer through a `cli` target"),
    "options": ("5.1.0", "remove it (`transform` and the other options are not run here)"),
    "run": ("5.1.0", "write `execution:` (`skip_defaults`)"),
    "threshold": ("5.1.0", "set `execution.threshold` for the suite, or `required`/`min_score` on a grader"),
    "assert_scoring_function": ("5.1.0", "use a `composite` grader with an aggregator"),
}
MAIN_BRANCH_GRADERS: dict[str, tuple[str, str]] = {
    "script": ("5.1.0", "write `type: code-grader` with `command:`"),
    "llm-rubric": ("5.1.0", "write `type: rubrics` with `criteria:`, or the criteria as plain strings"),
    "assert-set": ("5.1.0", "write `type: composite` with `assertions:`"),
    "skill-used": ("5.1.0", "write `type: skill-trigger` with `skill:`"),
    "not-skill-used": ("5.1.0", "write `type: skill-trigger` with `skill:` and `should_trigger: false`"),
    "trajectory:tool-used": ("5.1.0", "write `type: tool-trajectory` with `mode: any_order` and `minimums:`"),
    "trajectory:tool-sequence": (
        "5.1.0",
        "write `type: tool-trajectory` with `mode: in_order` or `exact` and `expected:`",
    ),
    "trajectory:tool-args-match": ("5.1.0", "write `type: tool-trajectory` with `expected:` items holding `args:`"),
    "trajectory:step-count": ("5.1.0", "write `type: execution-metrics` with `max_tool_calls:`"),
    "trajectory:goal-success": ("5.1.0", "write an `llm-grader`"),
    "javascript": ("5.1.0", "write `type: code-grader` with `command:`"),
    "python": ("5.1.0", "write `type: code-grader` with `command:`"),
    "webhook": ("5.1.0", "write `type: code-grader` whose command calls the webhook"),
    "similar": ("5.1.0", "write an `llm-grader` or a `code-grader`"),
}


def main_branch(key: str, table: dict[str, tuple[str, str]], what: str = "key") -> str:
    """The one line refusing AgentV main-branch syntax `key`."""
    version, instead = table[key]
    return f"{what} '{key}' is AgentV {version}'s syntax (after v4.42.4, the format read here); instead, {instead}"


# v4.42's grader types (kebab-case) and this tool's for each; our own types are accepted as written.
GRADER_TYPES: dict[str, str] = {
    "code-grader": "code_judge",
    "code-judge": "code_judge",
    "llm-grader": "llm_judge",
    "llm-judge": "llm_judge",
    "rubrics": "rubric",
    "rubric": "rubric",
    "field-accuracy": "field_accuracy",
    "composite": "composite",
    "tool-trajectory": "tool_trajectory",
    "latency": "latency",
    "cost": "cost",
    "token-usage": "token_usage",
    "execution-metrics": "execution_metrics",
    "iou-score": "iou_score",
    "coordinate-distance": "coordinate_distance",
    "contains": "contains",
    "contains-any": "contains_any",
    "contains-all": "contains_all",
    "icontains": "icontains",
    "icontains-any": "icontains_any",
    "icontains-all": "icontains_all",
    "starts-with": "starts_with",
    "ends-with": "ends_with",
    "regex": "regex",
    "equals": "equals",
    "is-json": "is_json",
    "skill-trigger": "skill_trigger",
}

# v4.42 types this tool does not run, with the reason a user reads.
UNSUPPORTED_TYPES: dict[str, str] = {
    "inline-assert": "is an SDK-only grader (a TypeScript function), not a dataset grader",
}
