"""What an LLM judge is sent as the answer when the target answered with content blocks (AgentV
v4.42's `extractTextWithPreprocessors`): the last assistant message's text blocks, and each file
block (`{type: file, path, media_type}`) as `[[ file: PATH ]]` and its text — from the
preprocessor for its media type (models/preprocessors.py), else the file read as UTF-8. What
could not be read is said in a `[file preprocessing warning]` line, never an error of the judge.

A file the answer names is data: it is read only inside the project (the repository holding the
dataset, else its directory) or the target's working directory, symlinks resolved, at most
FILE_CAP bytes; a preprocessor runs without a shell, with a timeout, its output bounded."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agentv_py.evaluators.base import EvalContext
from agentv_py.evaluators.judge_payload import judge_env
from agentv_py.locate import repo_root, script_path
from agentv_py.models.preprocessors import Preprocessor, media_type, merged
from agentv_py.process.spawn import DEFAULT_OUTPUT_CAP, run_process

FILE_CAP = DEFAULT_OUTPUT_CAP  # bytes of a file read for a judge, and of a preprocessor's output
REPLACEMENT = "\ufffd"


def judged_answer(context: EvalContext, own: list[Preprocessor] | None) -> str:
    """The answer as an LLM judge with these preprocessors of its own sees it: the target's last
    assistant message's content blocks as text when it gave blocks, else the answer as it is."""
    blocks = _last_blocks(context.output_messages)
    if blocks is None:
        return context.answer
    preprocessors = merged(context.preprocessors, own)
    key = tuple((p.media_type, tuple(p.command), p.timeout_seconds) for p in preprocessors)
    cache: dict[Any, str] = context.__dict__.setdefault("_judged_answers", {})  # once per case and set
    if key not in cache:
        cache[key] = _text_of(blocks, preprocessors, context)
    return cache[key]


def _last_blocks(messages: list[Any] | None) -> list[dict[str, Any]] | None:
    """The content blocks of the last assistant message, when it has blocks (typed mappings)."""
    for message in reversed(messages or []):
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("content") is not None:
            content = message["content"]
            if isinstance(content, list) and content and all(isinstance(b, dict) and "type" in b for b in content):
                return content
            return None
    return None


def _text_of(blocks: list[dict[str, Any]], preprocessors: list[Preprocessor], context: EvalContext) -> str:
    parts: list[str] = []
    warnings: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            text = block.get("text", block.get("value"))
            if isinstance(text, str):
                parts.append(text)
        elif kind == "file":
            text, warning = _file_text(block, preprocessors, context)
            if text:
                parts.append(text)
            if warning is not None:
                warnings.append(warning)
    return "\n".join(part for part in ["\n".join(parts), *warnings] if part)


def _file_text(
    block: dict[str, Any], preprocessors: list[Preprocessor], context: EvalContext
) -> tuple[str, str | None]:
    """(`[[ file: PATH ]]` and its text, or "", and a warning line or None)."""
    written = block.get("path")
    kind = block.get("media_type")
    kind = kind if isinstance(kind, str) else ""
    if not isinstance(written, str) or not written.strip():
        return "", _warning(repr(written), kind, "a file block needs a path")

    def warn(reason: str) -> tuple[str, str]:
        return "", _warning(written, kind, reason)

    path, refused = _local_path(written, context)
    if path is None:
        return warn(refused or "not readable")
    chosen = next((p for p in preprocessors if p.media_type == media_type(kind)), None)
    if chosen is not None:
        return _preprocessed(chosen, path, written, kind, context)
    try:
        with open(path, "rb") as handle:
            data = handle.read(FILE_CAP + 1)
    except OSError as exc:
        return warn(exc.strerror or str(exc))
    if len(data) > FILE_CAP:
        return warn(f"over the {FILE_CAP // (1024 * 1024)} MB limit of a file read for a judge")
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    if b"\0" in data or REPLACEMENT in text:
        return warn("default UTF-8 read produced binary or invalid text; configure a preprocessor")
    return f"[[ file: {written} ]]\n{text}", None


def _local_path(written: str, context: EvalContext) -> tuple[Path | None, str | None]:
    """The file a block names, if it may be read: (path, None) or (None, why not)."""
    if written.startswith("file://"):
        parsed = urlparse(written)
        if parsed.netloc not in ("", "localhost"):
            return None, "remote file paths are not supported for preprocessing"
        candidate = Path(unquote(parsed.path))
    elif re.match(r"[a-z][a-z0-9+.-]*://", written, re.IGNORECASE):
        return None, "remote file paths are not supported for preprocessing"
    else:
        base = context.answer_dir or context.dataset_dir
        candidate = base / written
    real = os.path.realpath(candidate)
    roots = _readable_roots(context)
    if not any(_inside(real, root) for root in roots):
        return None, (
            "outside the project and the target's working directory: not read "
            "(an answer's files are data: only files of the project are sent to a judge)"
        )
    if not os.path.isfile(real):
        return None, "not found" if not os.path.exists(real) else "not a regular file"
    return Path(real), None


def _readable_roots(context: EvalContext) -> list[str]:
    root = repo_root(context.dataset_dir.resolve())
    roots = [root if root is not None else context.dataset_dir]
    if context.answer_dir is not None:
        roots.append(context.answer_dir)
    return [os.path.realpath(r) for r in roots]


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def _preprocessed(
    chosen: Preprocessor, path: Path, written: str, kind: str, context: EvalContext
) -> tuple[str, str | None]:
    argv = script_path(chosen.command, context.dataset_dir)
    payload = json.dumps({"path": str(path), "original_path": written, "media_type": kind}).encode()
    result = run_process(
        argv,
        timeout=chosen.timeout_seconds,
        stdin=payload,
        cwd=context.dataset_dir,
        env=judge_env(),
        output_cap=FILE_CAP,
        registry=context.processes,
    )
    problem = result.abnormal_end(chosen.timeout_seconds, FILE_CAP)
    if problem is None and result.returncode != 0:
        tail = result.stderr_tail()
        problem = tail or result.killed_by_signal() or f"preprocessor exited with code {result.returncode}"
    if problem is not None:
        return "", _warning(written, kind, problem)
    try:
        text = result.stdout.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        return "", _warning(written, kind, f"the preprocessor's output is not UTF-8 (byte offset {exc.start})")
    return f"[[ file: {written} ]]\n{text}", None


def _warning(path: str, kind: str, reason: str) -> str:
    return f"[file preprocessing warning] {path} ({kind}): {reason}"
