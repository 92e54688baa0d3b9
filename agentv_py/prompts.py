"""Prompt template files of `llm_judge` and of a composite's llm_judge aggregator: found like
every dataset file (`agentv_py.locate`), read as UTF-8, and checked (unknown `{{ variables }}`).
Used by the loader (once, at load time) and by the evaluators (for a config built in code), so
both read a file the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentv_py.locate import not_found, resolve_file
from agentv_py.models.judges import template_problem


def read_prompt_template(
    value: str,
    base_dir: Path,
    dirs: list[Path] | None = None,
    check: Callable[[str], str | None] = template_problem,
) -> tuple[str | None, str | None]:
    """A prompt template file: (text, None), or (None, why not: not found, unreadable, or what
    `check` finds in it — by default an unknown `{{ variable }}` of a judge prompt)."""
    found, tried = resolve_file(value, base_dir, dirs)
    if found is None:
        return None, not_found("prompt file", value, tried)
    try:
        text = found.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"prompt file {value} is unreadable: {exc}"
    problem = check(text)
    if problem:
        return None, f"prompt file {value}: {problem}"
    return text, None
