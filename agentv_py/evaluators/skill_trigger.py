"""`skill_trigger` (AgentV v4.42's `skill-trigger`): did the target invoke a skill, read from the
tool calls of its `output_messages` (as `tool_trajectory` reads them); the detection and texts are
`agentv_py.scoring.skills`'.

A target that reported no tool calls (a plain answer, no messages at all) made none, as in
AgentV: `No tool calls recorded` when the skill should trigger, a pass when it should not. Tool
calls that cannot be read (a `tool_calls` that is not a list, a tool name that is not a string)
are a score-0 miss naming the first bad entry, whatever `should_trigger` says.
"""

from __future__ import annotations

from agentv_py.evaluators.base import EvalContext
from agentv_py.evaluators.tool_trajectory import outcome_result, output_messages
from agentv_py.models.results import EvaluatorResult
from agentv_py.models.trace_evaluators import SkillTriggerConfig
from agentv_py.scoring.skills import skill_trigger
from agentv_py.scoring.trace import read_tool_calls, unusable


def evaluate_skill_trigger(config: SkillTriggerConfig, context: EvalContext) -> EvaluatorResult:
    """Score 1 when the target invoked `skill` iff `should_trigger`, else 0."""
    calls = read_tool_calls(output_messages(context) or [])
    if calls.problem:
        outcome = unusable(
            f"Tool calls not readable: {calls.problem}", skill=config.skill, should_trigger=config.should_trigger
        )
    else:
        outcome = skill_trigger(config.skill, config.should_trigger, calls.calls)
    return outcome_result(config, outcome)
