"""Prompt scripts, for an llm_judge's `prompt: {script: [...]}` (AgentV's definePromptTemplate):
`@prompt_template` prints the judge's user prompt made from the code-judge payload. Imported by
`agentv_py.judge` only when a script names it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any, TypeVar

from agentv_py.judge_input import JudgeInput

F = TypeVar("F", bound=Callable[..., Any])


def run_prompt_template(
    fn: Callable[[JudgeInput], str], stdin: IO[str] | None = None, stdout: IO[str] | None = None
) -> int:
    """Read the payload, call `fn`, print the prompt it returns as it is; return the exit code.

    An llm_judge with `prompt: {script: [...]}` uses that text as the judge's user prompt. If `fn`
    raises or returns something other than a non-empty string, the traceback or the reason goes to
    stderr and the exit code is 1, which agentv reports as the evaluator's error (AgentV's
    definePromptTemplate did the same)."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        payload = json.load(stdin)
        if not isinstance(payload, dict):
            raise ValueError("the payload on stdin is not a JSON object")
        prompt = fn(JudgeInput.from_payload(payload))
        if not isinstance(prompt, str):
            raise TypeError(f"the prompt template returned {type(prompt).__name__}; return the prompt text (a str)")
        if not prompt.strip():
            raise ValueError("the prompt template returned an empty prompt")
    except Exception:  # noqa: BLE001 - reported through the exit code, never as a prompt
        import traceback

        traceback.print_exc(file=sys.stderr)
        return 1
    stdout.write(prompt + "\n")
    stdout.flush()
    return 0


def prompt_template(fn: F) -> F:
    """Decorator: when the file runs as a script, print `fn`'s prompt and exit (a prompt script
    for an llm_judge's `prompt: {script: [...]}`; AgentV's definePromptTemplate)."""
    if getattr(fn, "__module__", None) == "__main__":
        sys.exit(run_prompt_template(fn))
    return fn
