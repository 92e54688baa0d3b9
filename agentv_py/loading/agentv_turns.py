"""A v4.42 multi-turn case (`mode: conversation`, `turns`, `aggregation`, `on_turn_failure`,
`window_size`) read into this tool's `conversation:` (models/conversation.py).

As AgentV v4.42: each turn's `input` is the user's message, its `expected_output` the expected
answer, its `assertions` its graders (plain strings one rubric of weight 1, AgentV's
`turn-rubrics`); the case's own graders judge the whole transcript. `turns` without
`mode: conversation` were ignored by AgentV: here that is a warning, as are the other keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentv_py.loading.agentv_graders import GraderReader
from agentv_py.loading.agentv_values import expected_messages, render
from agentv_py.loading.written_paths import Path_, WrittenPaths
from agentv_py.models.agentv_vocabulary import CONVERSATION_KEYS, TURN_KEYS
from agentv_py.models.base import suggest

Report = Callable[[Path_, str], None]


def conversation(
    case: dict[str, Any],
    variables: dict[str, Any] | None,
    graders: GraderReader,
    paths: WrittenPaths,
    problem: Report,
    warning: Report,
    internal: Path_,
    written: Path_,
) -> dict[str, Any] | None:
    """The case's `conversation:` (None: not a conversation case); problems and warnings reported
    at the keys as written."""
    given = [key for key in CONVERSATION_KEYS if key in case]
    if not given:
        return None
    mode = case.get("mode")
    if mode is not None and mode != "conversation":
        problem((*written, "mode"), f"mode is 'conversation' (a multi-turn case), got {mode!r}")
        return None
    if mode is None:
        for key in given:
            warning((*written, key), f"{key} is ignored without mode: conversation (as AgentV v4.42 ignores it)")
        return None
    turns = case.get("turns")
    if not isinstance(turns, list) or not turns:
        problem((*written, "turns" if "turns" in case else "mode"), "mode: conversation needs turns: a list of turns")
        return None
    out: dict[str, Any] = {"turns": []}
    paths.record((*internal, "conversation"), (*written, "mode"))
    for key in ("aggregation", "on_turn_failure", "window_size"):
        if key in case:
            out[key] = case[key]
            paths.record((*internal, "conversation", key), (*written, key))
    paths.record((*internal, "conversation", "turns"), (*written, "turns"))
    broken = False  # a turn that is not a mapping: reported here, and no conversation is made
    for t, turn in enumerate(turns):
        where, at = (*internal, "conversation", "turns", t), (*written, "turns", t)
        paths.record(where, at)
        if not isinstance(turn, dict):
            problem(at, f"a turn is a mapping with {', '.join(TURN_KEYS)}, got {type(turn).__name__}")
            broken = True
            continue
        entry: dict[str, Any] = {}
        for key, value in turn.items():
            if key == "input":
                entry["input"] = render(value, variables)
            elif key == "expected_output":
                entry["expected_output"] = expected_messages(render(value, variables))
            elif key == "assertions":
                graders_out = graders.read_list(value, (*where, "evaluators"), (*at, key), criteria_weight=1.0)
                if graders_out is not None:
                    entry["evaluators"] = graders_out
            else:
                close = suggest(str(key), list(TURN_KEYS))
                problem((*at, key), f"unknown key '{key}' in a turn" + (f" (did you mean '{close}'?)" if close else ""))
        out["turns"].append(entry)
    return None if broken else out
