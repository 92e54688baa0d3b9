"""Domain errors. Only the CLI entry point catches these and maps them to exit codes."""

from __future__ import annotations

from dataclasses import dataclass


class AgentvError(Exception):
    """Base class for expected, user-facing errors (bad input or configuration).

    `message` says what is wrong; `hint` (optional) says what to do about it.
    """

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


@dataclass(frozen=True)
class Problem:
    """One located configuration problem: `file:line: location: message`."""

    file: str
    line: int | None
    location: str
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.location}: {self.message}" if self.location else f"{where}: {self.message}"


class ConfigError(AgentvError):
    """One or more problems in a dataset or targets file; nothing was run."""

    def __init__(self, problems: list[Problem], hint: str | None = None) -> None:
        self.problems = problems
        count = len(problems)
        head = "1 problem" if count == 1 else f"{count} problems"
        body = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{head} found:\n{body}", hint)


class TargetError(AgentvError):
    """The target cannot be selected or started (unknown name, failing healthcheck, ...)."""


class ResultsFileError(AgentvError):
    """The results file cannot be opened for writing (no permission, a directory, a device,
    another agentv run writing it): found before anything runs, so nothing was run."""


class OutputError(AgentvError):
    """Results or the summary could not be written (disk full, closed pipe, no permission): the
    run was stopped and every process it started was killed; rows already written are kept."""

    exit_code = 5
