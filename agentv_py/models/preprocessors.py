"""Content preprocessors (AgentV v4.42's `preprocessors:`): when a target answers with content
blocks naming files (`{type: file, path, media_type}`), an LLM judge is sent the files' text
instead: a preprocessor's command turns a file of its media type into text (a spreadsheet into
CSV, a PDF into its words), and any other file is read as UTF-8 text. Given for the suite (every
LLM judge) or on one judge (its own win by type). What runs them: `evaluators/preprocess.py`."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from agentv_py.models.base import StrictModel, Timeout

# AgentV's short names for media types (content-preprocessor.ts MIME_TYPE_ALIASES)
MEDIA_TYPE_ALIASES: dict[str, str] = {
    "csv": "text/csv",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "htm": "text/html",
    "html": "text/html",
    "json": "application/json",
    "markdown": "text/markdown",
    "md": "text/markdown",
    "pdf": "application/pdf",
    "sql": "application/sql",
    "txt": "text/plain",
    "xhtml": "application/xhtml+xml",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xml": "application/xml",
    "yaml": "application/yaml",
    "yml": "application/yaml",
}
DEFAULT_PREPROCESSOR_TIMEOUT = 60.0


def media_type(value: str) -> str:
    """A media type or its short name, normalised: `XLSX` and the spreadsheet MIME type are one."""
    normalised = value.strip().lower()
    return MEDIA_TYPE_ALIASES.get(normalised, normalised)


class Preprocessor(StrictModel):
    """One preprocessor: the files of media type `type` are given to `command` (an argv list; its
    last item is the script, resolved from the dataset's directory), which reads
    `{"path", "original_path", "media_type"}` as JSON on stdin and prints the file's text."""

    type: str = Field(description="a media type (application/pdf) or its short name (pdf, xlsx, csv, ...)")
    command: list[str]
    timeout_seconds: Timeout = DEFAULT_PREPROCESSOR_TIMEOUT

    @field_validator("type")
    @classmethod
    def _type(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a preprocessor needs a type (a media type such as application/pdf, or pdf, xlsx, ...)")
        return value.strip()

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        if isinstance(value, str):  # AgentV's shorthand: split on whitespace, never given to a shell
            value = value.split()
        if isinstance(value, list) and (not value or not all(isinstance(v, str) and v.strip() for v in value)):
            raise ValueError("command is a non-empty list of arguments, e.g. [python3, scripts/xlsx_to_csv.py]")
        return value

    @property
    def media_type(self) -> str:
        return media_type(self.type)


def merged(suite: list[Preprocessor] | tuple[Preprocessor, ...], own: list[Preprocessor] | None) -> list[Preprocessor]:
    """The suite's preprocessors with a judge's own replacing those of the same media type (AgentV's)."""
    by_type = {p.media_type: p for p in suite}
    by_type.update({p.media_type: p for p in own or []})
    return list(by_type.values())
