"""Pydantic models: dataset, targets, evaluator configs, results. No I/O, no package imports."""

from agentv_py.models.dataset import ContentItem, Dataset, EvalCase, Message
from agentv_py.models.evaluators import CodeJudgeConfig, EvaluatorConfig
from agentv_py.models.fields import FieldAccuracyConfig, FieldSpec
from agentv_py.models.results import CaseStatus, EvaluatorResult, ResultRow, Trace, Verdict
from agentv_py.models.targets import CliTarget, MockTarget, TargetConfig, TargetsFile

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
