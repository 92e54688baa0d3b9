"""Reading YAML into located problems: the parse (dates stay strings), a content-hash parse cache,
line numbers for locations, and pydantic errors turned into `file:line: location: message`.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agentv_py.errors import ConfigError, Problem
from agentv_py.models.base import UNKNOWN_KEYS, unknown_key_error
from agentv_py.models.dataset import CONTENT_TAGS
from agentv_py.models.evaluators import EVALUATOR_TYPE_NAMES
from agentv_py.models.targets import PROVIDERS

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe YAML, except that dates stay strings: ground truth `2025-01-15` must compare as the
    text the extractor emits, not as a Python date."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag != _TIMESTAMP]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
_Loader.add_constructor(_TIMESTAMP, lambda loader, node: loader.construct_scalar(node))

CACHE_VERSION = "1"
CACHE_MAX_ENTRIES = 32


def format_location(parts: Iterable[str | int]) -> str:
    """('evalcases', 3, 'evaluators', 0) -> 'evalcases[3].evaluators[0]'."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class _LineIndex:
    """Line numbers for locations in a YAML file. The file is read again and its node tree built
    only when a problem needs a line number, so a valid dataset costs one parse, not two."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._root: yaml.Node | None = None
        self._built = False

    def line(self, parts: Iterable[str | int]) -> int | None:
        if not self._built:
            self._built = True
            try:
                self._root = yaml.compose(self._path.read_bytes(), Loader=_Loader)
            except (OSError, yaml.YAMLError):
                self._root = None
        node, line = self._root, None
        if node is None:
            return None
        line = node.start_mark.line + 1
        for part in parts:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if key_node.value == part:
                        line, node = key_node.start_mark.line + 1, value_node
                        break
                else:
                    return line
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line


@dataclass
class Source:
    """A loaded YAML file: where it is, how it is shown, and line numbers for its locations."""

    path: Path
    display: str
    lines: _LineIndex

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        return Problem(self.display, self.lines.line(parts), format_location(parts), message)


def display_path(path: Path) -> str:
    """The path as the user would type it: relative under the current directory, else absolute."""
    absolute = path.resolve()
    try:
        return str(absolute.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(absolute)


def read_yaml(path: Path) -> tuple[Source, Any]:
    """Read and parse a YAML file; unreadable or invalid YAML is a ConfigError with its line."""
    display = display_path(path)
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError([Problem(display, None, "", "file not found")]) from None
    except IsADirectoryError:
        raise ConfigError([Problem(display, None, "", "is a directory, expected a YAML file")]) from None
    source = Source(path, display, _LineIndex(path))
    try:
        data = _parse_cached(content)
    except yaml.reader.ReaderError as exc:
        reason = (
            f"not valid UTF-8 (byte 0x{exc.character:02x} at offset {exc.position})"
            if isinstance(exc.character, int)
            else f"unreadable: {exc.reason}"
        )
        raise ConfigError([Problem(display, None, "", reason)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        column = f" at column {mark.column + 1}" if mark is not None else ""
        text_reason = f"invalid YAML{column}: {reason}" + (f" ({context})" if context else "")
        raise ConfigError([Problem(display, line, "", text_reason)]) from None
    return source, data


def cache_dir() -> Path | None:
    """Where parsed YAML is cached (None when AGENTV_NO_CACHE is set)."""
    if os.environ.get("AGENTV_NO_CACHE"):
        return None
    base = os.environ.get("AGENTV_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agentv"
    )
    return Path(base) / "yaml"


def _parse_cached(content: bytes) -> Any:
    """yaml.load, memoised on disk by content hash: a large dataset is parsed once, not per run.

    The cache holds only the parsed data; validation always runs in full. Any cache problem
    falls back to parsing.
    """
    directory = cache_dir()
    if directory is None or len(content) < 64 * 1024:
        return yaml.load(content, Loader=_Loader)
    digest = hashlib.blake2b(content, digest_size=20)
    digest.update(f"{CACHE_VERSION}/{yaml.__version__}".encode())
    entry = directory / f"{digest.hexdigest()}.marshal"
    try:
        return marshal.loads(entry.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        pass
    data = yaml.load(content, Loader=_Loader)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(marshal.dumps(data))
        os.replace(temporary, entry)
        entries = sorted(directory.glob("*.marshal"), key=lambda p: p.stat().st_mtime)
        for old in entries[:-CACHE_MAX_ENTRIES]:
            old.unlink(missing_ok=True)
    except (OSError, ValueError):
        pass
    return data


_JSON_TYPE = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _data_path(raw: Any, loc: tuple[Any, ...]) -> list[str | int]:
    """The part of a pydantic loc that exists in the raw data (drops union tags like 'items')."""
    parts: list[str | int] = []
    current = raw
    for part in loc:
        if (
            isinstance(current, dict)
            and part in current
            or isinstance(current, list)
            and isinstance(part, int)
            and part < len(current)
        ):
            current = current[part]
            parts.append(part)
        elif isinstance(current, (dict, list)):
            # a tag (skip it) or a key that is absent (a "missing" error: keep it as the last part)
            if not (isinstance(part, str) and _is_union_tag(part)):
                parts.append(part)
                current = None
        else:
            break
    return parts


# Union member tags pydantic puts into error locations (not keys of the data).
_UNION_TAGS = {*CONTENT_TAGS, *EVALUATOR_TYPE_NAMES, *PROVIDERS}


def _is_union_tag(part: str) -> bool:
    return part in _UNION_TAGS


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    msg = str(error["msg"])
    value = error.get("input")
    if kind == "missing":
        return f"missing required key '{error['loc'][-1]}'"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind in {"unknown_key", "unknown_tag", "missing_tag", "alias_conflict", "invalid_option"}:
        return msg
    if kind == "literal_error":
        return f"invalid value {_short(value)}: expected {error['ctx']['expected']}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"expected a mapping, got {_json_type(value)} {_short(value)}"
    if kind.endswith(("_type", "_parsing")):
        text = f"{msg[0].lower()}{msg[1:]}, got {_json_type(value)} {_short(value)}"
        if kind == "string_type" and isinstance(value, bool):
            text += " (YAML reads yes/no/on/off/true/false as booleans: quote the value)"
        return text
    return f"{msg} (got {_short(value)})"


def validate(source: Source, raw: Any, model: type[BaseModel]) -> tuple[Any | None, list[Problem]]:
    """Validate parsed YAML against a model; every problem located (unknown keys collected, not
    fatal). Returns (model or None, problems sorted by line)."""
    if not isinstance(raw, dict):
        kind = _json_type(raw)
        what = "empty" if raw is None else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
        return None, [source.problem([], f"expected a mapping at the top level, the file is {what}")]
    unknown: list[tuple[int, list[str], list[str]]] = []
    problems: list[Problem] = []
    parsed = None
    try:
        parsed = model.model_validate(raw, context={UNKNOWN_KEYS: unknown})
    except ValidationError as exc:
        for error in exc.errors():
            parts = _data_path(raw, tuple(error["loc"]))
            key = (error.get("ctx") or {}).get("agentv_key")
            if key is not None and (not parts or parts[-1] != key):
                parts.append(key)
            problems.append(source.problem(parts, _message(error)))
    if unknown:
        paths = _paths_by_identity(raw)
        for identity, keys, valid in unknown:
            base = paths.get(identity, [])
            for key in keys:
                problems.append(source.problem([*base, key], str(unknown_key_error([key], valid))))
    problems.sort(key=lambda p: (p.line or 0, p.location))
    return (parsed if not problems else None), problems


def _paths_by_identity(raw: Any) -> dict[int, list[str | int]]:
    found: dict[int, list[str | int]] = {}
    stack: list[tuple[Any, list[str | int]]] = [(raw, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            found[id(node)] = path
            stack.extend((v, [*path, k]) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in enumerate(node) if isinstance(v, (dict, list)))
    return found
