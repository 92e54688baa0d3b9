"""How what the docs show is compared with what a command prints.

Both sides are cut into lines with trailing spaces removed and trailing blank lines dropped. Then:

- What legitimately differs between runs is normalised, on both sides, by the rules of
  NORMALISE (each says why); the workspace's absolute path in the output becomes `/repo`.
- Progress lines (`[3/7] pass    1.000  invoice-002`) arrive in the order cases finish, which
  the workers decide: the command's block of progress lines is put in case-id order and
  renumbered, and the docs show them in that order.
- A docs line that is `...` alone stands for any number of lines (none included); a docs line
  ending in `...` stands for a line that starts with what comes before the `...`.

Everything else must be equal, line for line. (No output the docs show holds a time, a duration
or a date today; a rule for one goes into NORMALISE when one does.)
"""

from __future__ import annotations

import difflib
import re

NORMALISE: list[tuple[re.Pattern[str], str, str]] = [
    (
        re.compile(r"\d{8}T\d{6}\.\d{3}Z_\d+-[0-9a-f]{4}"),
        "<stamp>",
        "a results file's default name: the run's UTC time to the millisecond, the process id, 4 random hex digits",
    ),
]

PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (\S+ +\S+ +)(.+)$")


def lines_of(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def normalise(lines: list[str], workspace: str | None = None) -> list[str]:
    """`lines` with NORMALISE applied and, given the workspace's path, that path made `/repo`."""
    out = []
    for line in lines:
        if workspace:
            line = line.replace(workspace, "/repo")
        for pattern, replacement, _why in NORMALISE:
            line = pattern.sub(replacement, line)
        out.append(line)
    return out


def progress_in_case_order(lines: list[str]) -> list[str]:
    """Each run of consecutive progress lines sorted by case id and numbered 1, 2, ... again."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        end = index
        while end < len(lines) and PROGRESS.match(lines[end]):
            end += 1
        if end == index:
            out.append(lines[index])
            index += 1
            continue
        found = [PROGRESS.match(line) for line in lines[index:end]]
        ordered = sorted((m for m in found if m), key=lambda m: m.group(4))
        out += [f"[{k}/{m.group(2)}] {m.group(3)}{m.group(4)}" for k, m in enumerate(ordered, 1)]
        index = end
    return out


def _pattern(shown: list[str]) -> re.Pattern[str]:
    parts = []
    for line in shown:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        elif line.endswith("..."):
            parts.append(re.escape(line[:-3]) + r"[^\n]*\n")
        else:
            parts.append(re.escape(line) + r"\n")
    return re.compile("".join(parts))


def mismatch(shown: list[str], printed: list[str]) -> str | None:
    """None when `printed` is what the docs' `shown` lines describe, else a diff to read."""
    if _pattern(shown).fullmatch("".join(line + "\n" for line in printed)):
        return None
    diff = difflib.unified_diff(shown, printed, "shown in the docs", "printed", lineterm="", n=2)
    return "\n".join(diff)
