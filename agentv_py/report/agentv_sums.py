"""AgentV v4.42.4's names and sums for a run folder (report/agentv_run.py writes it): grader
types both ways, the per-case and per-run `timing.json`, and `benchmark.json`, each computed as
AgentV's run-artifacts.ts computes it (its 0.8 pass threshold; statistics rounded as JavaScript's
`Math.round` rounds)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentv_py.models.results import ResultRow

AGENTV_THRESHOLD = 0.8  # AgentV's DEFAULT_THRESHOLD (graders/scoring.ts): a grader passes at 0.8

# Our evaluator types whose AgentV grader type is not just the kebab-case of the name.
_AGENTV_TYPES = {"llm_judge": "llm-grader", "code_judge": "code-grader"}
_OUR_TYPES = {agentv: ours for ours, agentv in _AGENTV_TYPES.items()}


def agentv_type(ours: str) -> str:
    """The AgentV grader type of one of our evaluator types (`field_accuracy` -> `field-accuracy`)."""
    return _AGENTV_TYPES.get(ours, ours.replace("_", "-"))


def our_type(agentv: str) -> str:
    """Our evaluator type of an AgentV grader type (`agentv_type` undone)."""
    return _OUR_TYPES.get(agentv, agentv.replace("-", "_"))


def round3(value: float) -> float:
    """JavaScript's `Math.round(value * 1000) / 1000`, as AgentV rounds its statistics."""
    return math.floor(value * 1000 + 0.5) / 1000


def _stats(values: list[float]) -> dict[str, float]:
    """AgentV's `computeStats`: mean and population standard deviation, to 3 decimals."""
    if not values:
        return {"mean": 0, "stddev": 0}
    mean = sum(values) / len(values)
    variance = sum((v - mean) ** 2 for v in values) / len(values)
    return {"mean": round3(mean), "stddev": round3(math.sqrt(variance))}


def _tokens(usage: dict[str, Any] | None) -> tuple[float, float, float]:
    """(input, output, reasoning) tokens of a token usage, 0 for what it does not say."""

    def number(key: str) -> float:
        value = (usage or {}).get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else 0

    return number("input"), number("output"), number("reasoning")


def timing(rows: Iterable[ResultRow]) -> dict[str, Any]:
    """`buildTimingArtifact`: tokens and duration summed over `rows`."""
    tokens_in = tokens_out = reasoning = duration = 0.0
    for row in rows:
        a, b, c = _tokens(row.trace.token_usage)
        tokens_in, tokens_out, reasoning, duration = (
            tokens_in + a,
            tokens_out + b,
            reasoning + c,
            duration + row.duration_ms,
        )
    return {
        "total_tokens": tokens_in + tokens_out,
        "duration_ms": duration,
        "total_duration_seconds": round3(duration / 1000),
        "token_usage": {"input": tokens_in, "output": tokens_out, "reasoning": reasoning},
    }


@dataclass
class _Target:
    pass_rates: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    tokens: list[float] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)


@dataclass
class Benchmark:
    """`buildBenchmarkArtifact`, summed a row at a time (only numbers and ids are kept)."""

    eval_file: str = ""
    timestamp: str | None = None
    targets: dict[str, _Target] = field(default_factory=dict)
    tests: set[str] = field(default_factory=set)
    graders: dict[str, list[float]] = field(default_factory=dict)
    errors: int = 0
    totals: dict[str, Any] = field(default_factory=lambda: timing([]))

    def add(self, row: ResultRow) -> None:
        if self.timestamp is None:
            self.timestamp = row.timestamp
        self.tests.add(row.eval_id)
        target = self.targets.setdefault(row.target, _Target())
        failed = row.status == "error"
        self.errors += failed
        if not failed:
            scores = [result.score or 0 for result in row.evaluator_results]
            passing = [score >= AGENTV_THRESHOLD for score in scores] if scores else [row.score >= AGENTV_THRESHOLD]
            target.pass_rates.append(sum(passing) / len(passing))
            for result in row.evaluator_results:
                key = f"{result.name}:{agentv_type(result.type)}"
                self.graders.setdefault(key, []).append(result.score or 0)
        target.seconds.append(row.duration_ms / 1000)
        if row.trace.token_usage is not None:
            a, b, _ = _tokens(row.trace.token_usage)
            target.tokens.append(a + b)
        if row.trace.cost_usd is not None:
            target.costs.append(row.trace.cost_usd)
        one = timing([row])
        for key in ("total_tokens", "duration_ms"):
            self.totals[key] += one[key]
        for key in ("input", "output", "reasoning"):
            self.totals["token_usage"][key] += one["token_usage"][key]
        self.totals["total_duration_seconds"] = round3(self.totals["duration_ms"] / 1000)

    def document(self) -> dict[str, Any]:
        summary: dict[str, Any] = {}
        for name in sorted(self.targets):
            target = self.targets[name]
            entry: dict[str, Any] = {
                "pass_rate": _stats(target.pass_rates),
                "time_seconds": _stats(target.seconds),
                "tokens": _stats(target.tokens),
            }
            if target.costs:
                entry["cost_usd"] = _stats(target.costs)
            summary[name] = entry
        notes = []
        if self.errors:
            notes.append(f"{self.errors} test(s) had execution errors and are excluded from quality pass_rate")
        if not self.tests:
            notes.append("No results to summarize")
        document: dict[str, Any] = {
            "metadata": {
                "eval_file": self.eval_file,
                "timestamp": self.timestamp or "",
                "targets": sorted(self.targets),
                "tests_run": sorted(self.tests),
            },
            "run_summary": summary,
        }
        if self.graders:
            document["per_grader_summary"] = {key: _stats(scores) for key, scores in self.graders.items()}
        document["notes"] = notes
        return document
