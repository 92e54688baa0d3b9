"""Pydantic models: dataset, targets, evaluator configs, results. No I/O, no package imports.

The names below are imported on first use (`__getattr__`): importing a module of this package
(e.g. `models.indexed`) must not build every model, and a command imports only those it uses."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentv_py.models.dataset import ContentItem, Dataset, EvalCase, Message
    from agentv_py.models.evaluators import CodeJudgeConfig, EvaluatorConfig
    from agentv_py.models.fields import FieldAccuracyConfig, FieldSpec
    from agentv_py.models.results import CaseStatus, EvaluatorResult, ResultRow, Trace, Verdict
    from agentv_py.models.targets import CliTarget, MockTarget, TargetConfig, TargetsFile

_HOME = {
    **dict.fromkeys(["ContentItem", "Dataset", "EvalCase", "Message"], "dataset"),
    **dict.fromkeys(["CodeJudgeConfig", "EvaluatorConfig"], "evaluators"),
    **dict.fromkeys(["FieldAccuracyConfig", "FieldSpec"], "fields"),
    **dict.fromkeys(["CaseStatus", "EvaluatorResult", "ResultRow", "Trace", "Verdict"], "results"),
    **dict.fromkeys(["CliTarget", "MockTarget", "TargetConfig", "TargetsFile"], "targets"),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "CaseStatus",
    "CliTarget",
    "CodeJudgeConfig",
    "ContentItem",
    "Dataset",
    "EvalCase",
    "EvaluatorConfig",
    "EvaluatorResult",
    "FieldAccuracyConfig",
    "FieldSpec",
    "Message",
    "MockTarget",
    "ResultRow",
    "TargetConfig",
    "TargetsFile",
    "Trace",
    "Verdict",
]
