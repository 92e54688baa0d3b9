"""agentv: an eval runner for structured outputs.

The command line (`agentv eval`, `validate`, `metrics`) is the main interface; this module is the
small public API for embedding it. Names are imported on first use, so `import agentv_py` (and
`agentv --help`) stay fast.

    from agentv_py import load_dataset, run_eval, match_fuzzy

    dataset = load_dataset("evals/invoice-extraction/dataset.yaml")   # raises ConfigError
    result = run_eval(dataset.path, out="results.jsonl")              # rows in dataset order
    failed = [row.eval_id for row in result.rows if row.verdict != "pass"]
    match_fuzzy("Acme - Shipping", "Acme Shipping", threshold=0.85).passed

- Loading: `load_dataset`, `load_targets` (every problem as `file:line: location: message`).
- Running: `run_eval` (what `agentv eval` does) returning `EvalResult(rows, summary)`; `Run` and
  `RunOptions` for driving a run yourself.
- Scoring: the matchers `match_exact`, `match_numeric`, `match_fuzzy`, `match_date`,
  `similarity`; `run_evaluator` with an `EvalContext`; `verdict_for`, `case_verdict`,
  `PASS_THRESHOLD`.
- Results: `ResultRow`, `EvaluatorResult`, `Trace`, and `read_rows` for a JSONL file.
- Errors: `AgentvError` and its `ConfigError` (with `.problems`), `TargetError` and
  `OutputError` (results could not be written); `Interrupted` from `Run.execute`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from agentv_py.errors import AgentvError, ConfigError, OutputError, Problem, TargetError
    from agentv_py.evaluators import EvalContext, run_evaluator
    from agentv_py.loading import load_dataset, load_targets
    from agentv_py.models.results import EvaluatorResult, ResultRow, Trace
    from agentv_py.prepared import LoadedDataset, PreparedCase
    from agentv_py.report.jsonl import read_rows
    from agentv_py.runner.engine import RunOptions
    from agentv_py.runner.executor import Interrupted
    from agentv_py.runner.run import Run
    from agentv_py.scoring.case import PASS_THRESHOLD, case_verdict, verdict_for
    from agentv_py.scoring.dates import match_date
    from agentv_py.scoring.match import MatchResult, match_exact, match_fuzzy, match_numeric, similarity
    from agentv_py.session import EvalResult, run_eval

_EXPORTS = {
    "AgentvError": "agentv_py.errors",
    "ConfigError": "agentv_py.errors",
    "Problem": "agentv_py.errors",
    "TargetError": "agentv_py.errors",
    "OutputError": "agentv_py.errors",
    "EvalContext": "agentv_py.evaluators",
    "run_evaluator": "agentv_py.evaluators",
    "load_dataset": "agentv_py.loading",
    "load_targets": "agentv_py.loading",
    "EvaluatorResult": "agentv_py.models.results",
    "ResultRow": "agentv_py.models.results",
    "Trace": "agentv_py.models.results",
    "LoadedDataset": "agentv_py.prepared",
    "PreparedCase": "agentv_py.prepared",
    "read_rows": "agentv_py.report.jsonl",
    "Run": "agentv_py.runner.run",
    "RunOptions": "agentv_py.runner.engine",
    "Interrupted": "agentv_py.runner.executor",
    "PASS_THRESHOLD": "agentv_py.scoring.case",
    "case_verdict": "agentv_py.scoring.case",
    "verdict_for": "agentv_py.scoring.case",
    "MatchResult": "agentv_py.scoring.match",
    "match_date": "agentv_py.scoring.dates",
    "match_exact": "agentv_py.scoring.match",
    "match_fuzzy": "agentv_py.scoring.match",
    "match_numeric": "agentv_py.scoring.match",
    "similarity": "agentv_py.scoring.match",
    "EvalResult": "agentv_py.session",
    "run_eval": "agentv_py.session",
}

__all__ = [
    "__version__",
    "AgentvError",
    "ConfigError",
    "EvalContext",
    "EvalResult",
    "EvaluatorResult",
    "LoadedDataset",
    "Interrupted",
    "MatchResult",
    "PASS_THRESHOLD",
    "PreparedCase",
    "OutputError",
    "Problem",
    "ResultRow",
    "Run",
    "RunOptions",
    "TargetError",
    "Trace",
    "case_verdict",
    "load_dataset",
    "load_targets",
    "match_date",
    "match_exact",
    "match_fuzzy",
    "match_numeric",
    "read_rows",
    "run_eval",
    "run_evaluator",
    "similarity",
    "verdict_for",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentv_py' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
