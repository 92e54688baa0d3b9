"""`agentv explain`'s lines: values from a run as text (made terminal-safe, shortened unless
`--full`), and every line wrapped to the terminal between words, with a hanging indent
(`report.layout`: a word is never split; one longer than the line is a line of its own, whole).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentv_py.report.layout import wrapped_lines
from agentv_py.report.text import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

SHORT = 120  # characters of a value shown without --full
HANG = "  "  # how much deeper than its line a continuation starts, when it does not line up with a label


def value_text(value: Any) -> str:
    """A value as JSON-ish text (a string quoted), not yet made terminal-safe."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def cut_text(text: str, full: bool) -> str:
    """Text made safe for a terminal, cut to SHORT characters unless `full`."""
    text = visible(text)
    if full or len(text) <= SHORT:
        return text
    return f"{text[:SHORT]}… ({len(text)} characters; --full shows all)"


def shown(value: Any, full: bool) -> str:
    """A value as JSON-ish text, made safe for a terminal, cut to SHORT characters unless `full`."""
    return cut_text(value_text(value), full)


def num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@dataclass(frozen=True)
class Say:
    """Prints one line of the view: `indent`, `label`, then `text` (label and text are data: made
    terminal-safe here, printed as text, never markup), wrapped between words to the console's
    width. Continuation lines start under the text when the label is short (half the line at
    most), else two spaces deeper than the line's indent."""

    console: Console

    def lines(self, text: str, label: str = "", indent: str = "") -> list[Text]:
        from rich.cells import cell_len
        from rich.text import Text

        label, text = visible(label), visible(text)
        head = indent + label
        if label and cell_len(head) <= self.console.width // 2:
            return wrapped_lines(self.console.width, Text(text), head)
        return wrapped_lines(self.console.width, Text(label + text), indent, hang=indent + HANG)

    def __call__(self, text: str, label: str = "", indent: str = "") -> None:
        for line in self.lines(text, label, indent):
            self.console.print(line, soft_wrap=True)
