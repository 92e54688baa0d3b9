"""Every key of an AgentV v4.42 dataset and what this tool does with it (`loading.agentv_442`):
kept as the internal model has it, read for the record only (informational), refused with the
reason, or accepted with a warning saying what is not carried out. docs/agentv-compat.md has the
same table for people."""

from __future__ import annotations

FORMAT_KEY = "agentv_format"
EARLY_2026 = "2026-02"
V4_42 = "4.42"
FORMATS = (EARLY_2026, V4_42)

GRADER_KEYS = ("assertions", "assert", "evaluators")

# Top-level keys: kept as they are, read for the record only, or not carried out (with why).
TOP_KEPT = ("$schema", "description", "target", "gates", "pass_threshold", "dataset", "evaluator")
TOP_INFORMATIONAL = ("category", "version", "author", "tags", "license", "requires", "metadata", "governance")
TOP_REFUSED = {
    "preprocessors": "AgentV's preprocessors (TypeScript content transforms for graders) are not supported",
}
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
    "mode": "multi-turn conversation cases (mode, turns) are not supported yet",
    "turns": "multi-turn conversation cases (mode, turns) are not supported yet",
    "aggregation": "multi-turn conversation cases (mode, turns) are not supported yet",
    "on_turn_failure": "multi-turn conversation cases (mode, turns) are not supported yet",
    "window_size": "multi-turn conversation cases (mode, turns) are not supported yet",
    "depends_on": "case dependencies (depends_on) are not supported: every case runs on its own",
    "on_dependency_failure": "case dependencies (depends_on) are not supported: every case runs on its own",
}
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
