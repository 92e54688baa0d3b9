"""YAML -> models, with `file:line: location: message` problems (SPEC §1, §2).

`load_dataset` is exactly what `agentv validate` runs: it collects every problem in the file
(structure, types, unknown keys, duplicate ids, missing files, evaluator config) before raising.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml
from pydantic import BaseModel, ValidationError

from agentv_py.errors import ConfigError, Problem, TargetError
from agentv_py.media import ImageRef, check_image_file, is_url, parse_data_uri
from agentv_py.models.base import UNKNOWN_KEYS, unknown_key_error
from agentv_py.models.dataset import CONTENT_TAGS, Dataset, EvalCase
from agentv_py.models.evaluators import (
    EVALUATOR_TYPE_NAMES,
    JUDGE_CONFIG_TYPES,
    FieldAccuracyConfig,
    LlmJudgeConfig,
    template_problem,
)
from agentv_py.models.targets import PROVIDERS, TargetConfig, TargetsFile
from agentv_py.process.command import script_argv
from agentv_py.process.programs import find_program, missing_program_message
from agentv_py.scoring.paths import path_problem

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
ENV_RE = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


# --------------------------------------------------------------------------- locations

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


# --------------------------------------------------------------------------- YAML + pydantic

@dataclass
class _Source:
    path: Path
    display: str
    lines: _LineIndex

    def problem(self, parts: Iterable[str | int], message: str) -> Problem:
        parts = list(parts)
        return Problem(self.display, self.lines.line(parts), format_location(parts), message)


def _display(path: Path) -> str:
    """The path as the user would type it: relative under the current directory, else absolute."""
    absolute = path.resolve()
    try:
        return str(absolute.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(absolute)


def _read_yaml(path: Path) -> tuple[_Source, Any]:
    display = _display(path)
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError([Problem(display, None, "", "file not found")]) from None
    except IsADirectoryError:
        raise ConfigError([Problem(display, None, "", "is a directory, expected a YAML file")]) from None
    source = _Source(path, display, _LineIndex(path))
    try:
        data = _parse_cached(content)
    except yaml.reader.ReaderError as exc:
        reason = f"not valid UTF-8 (byte 0x{exc.character:02x} at offset {exc.position})" if isinstance(
            exc.character, int) else f"unreadable: {exc.reason}"
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
        if isinstance(current, dict) and part in current:
            current = current[part]
            parts.append(part)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
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


def _message(error: dict[str, Any]) -> str:
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
    if kind.endswith("_type") or kind.endswith("_parsing"):
        text = f"{msg[0].lower()}{msg[1:]}, got {_json_type(value)} {_short(value)}"
        if kind == "string_type" and isinstance(value, bool):
            text += " (YAML reads yes/no/on/off/true/false as booleans: quote the value)"
        return text
    return f"{msg} (got {_short(value)})"


def _validate(source: _Source, raw: Any, model: type[BaseModel]) -> tuple[Any | None, list[Problem]]:
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


# --------------------------------------------------------------------------- files

def repo_root(start: Path) -> Path | None:
    """The nearest ancestor (or self) holding `.git`, else None."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def search_dirs(base_dir: Path) -> list[Path]:
    """Where relative paths are looked up: base dir, its ancestors up to the repository root (all of
    them outside a repository), then the current directory."""
    base_dir = base_dir.resolve()
    root = repo_root(base_dir)  # outside a repository: every ancestor
    dirs = [base_dir]
    for parent in base_dir.parents if base_dir != root else ():
        dirs.append(parent)
        if parent == root:
            break
    cwd = Path.cwd().resolve()
    if cwd not in dirs:
        dirs.append(cwd)
    return dirs


def resolve_file(value: str, base_dir: Path, dirs: list[Path] | None = None) -> tuple[Path | None, list[Path]]:
    """Resolve a dataset-relative file path; returns (found path or None, every place tried).

    `dirs` is `search_dirs(base_dir)` when the caller resolves many files from one place.
    """
    candidate = Path(os.path.expanduser(value))
    if candidate.is_absolute():
        return (candidate if candidate.is_file() else None), [candidate]
    tried = []
    for directory in dirs if dirs is not None else search_dirs(base_dir):
        # Lexical normalisation of an absolute directory: no realpath syscalls per file.
        path = os.path.normpath(os.path.join(directory, candidate))
        tried.append(Path(path))
        if os.path.isfile(path):
            return Path(path), tried
    return None, tried


# --------------------------------------------------------------------------- dataset

@dataclass
class PreparedCase:
    """An eval case with everything the engine needs resolved once, at load time."""

    case: EvalCase
    index: int
    files: list[str]
    images: list[ImageRef]
    expected: Any
    question: str


@dataclass
class LoadedDataset:
    path: Path
    name: str
    model: Dataset
    cases: list[PreparedCase]
    warnings: list[Problem] = field(default_factory=list)
    source: _Source | None = None  # for problems found later (judge targets)

    @property
    def directory(self) -> Path:
        return self.path.parent


def _ground_truth(value: Any) -> Any:
    """Objects/lists as they are; a string is parsed as JSON when it is JSON, else kept as text."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null") or _looks_numeric(stripped):
            try:
                return json.loads(stripped)
            except ValueError:
                return value
    return value


def _looks_numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or (text[0] == "-" and text[1:2].isdigit()))


def load_dataset(path: str | Path) -> LoadedDataset:
    """Load and validate a dataset file; raise ConfigError listing every problem found."""
    dataset_path = Path(path).resolve() if Path(path).exists() else Path(path)
    source, raw = _read_yaml(Path(path))
    model, problems = _validate(source, raw, Dataset)
    problems.extend(_semantic_problems(source, raw))
    # File resolution needs the raw case list even when the model failed, so every problem shows.
    resolved, file_problems = _resolve_case_files(source, raw, Path(path).resolve().parent)
    problems.extend(file_problems)
    if problems:
        raise ConfigError(sorted(problems, key=lambda p: (p.line or 0, p.location)))
    assert model is not None
    judge_problems = _judge_problems(source, model, dataset_path.resolve().parent)
    judge_problems += _prompt_problems(source, model, dataset_path.resolve().parent)
    if judge_problems:
        raise ConfigError(judge_problems)
    name = model.dataset or dataset_path.stem
    warnings = _path_warnings(source, model)
    cases = [
        PreparedCase(
            case=case,
            index=i,
            files=resolved.get((i, "file"), []),
            images=resolved.get((i, "image"), []),
            expected=_ground_truth(case.expected_value),
            question=case.question,
        )
        for i, case in enumerate(model.evalcases)
    ]
    return LoadedDataset(dataset_path.resolve(), name, model, cases, warnings, source)


def _cases(raw: Any) -> list[Any]:
    cases = raw.get("evalcases") if isinstance(raw, dict) else None
    return cases if isinstance(cases, list) else []


def _semantic_problems(source: _Source, raw: Any) -> list[Problem]:
    problems: list[Problem] = []
    first_seen: dict[str, int] = {}
    suite = raw.get("execution") if isinstance(raw, dict) else None
    has_suite_evaluators = isinstance(suite, dict) and bool(suite.get("evaluators"))
    for i, case in enumerate(_cases(raw)):
        if not isinstance(case, dict):
            continue
        case_id = case.get("id")
        if isinstance(case_id, str):
            if case_id in first_seen:
                problems.append(
                    source.problem(
                        ["evalcases", i, "id"],
                        f"duplicate id '{case_id}' (first used by evalcases[{first_seen[case_id]}]); ids must be unique",
                    )
                )
            else:
                first_seen[case_id] = i
        execution = case.get("execution")
        case_evaluators = case.get("evaluators", execution.get("evaluators") if isinstance(execution, dict) else None)
        if not has_suite_evaluators and not case_evaluators:
            problems.append(
                source.problem(
                    ["evalcases", i],
                    f"case '{case_id}' has no evaluators: add execution.evaluators to the dataset "
                    "or evaluators to the case",
                )
            )
    return problems


def _content_items(case: dict[str, Any]) -> Iterable[tuple[list[str | int], dict[str, Any]]]:
    key = "input_messages" if "input_messages" in case else "input"
    messages = case.get(key)
    if not isinstance(messages, list):
        return
    for j, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for k, item in enumerate(content):
                if isinstance(item, dict):
                    yield [key, j, "content", k], item


def _resolve_case_files(
    source: _Source, raw: Any, base_dir: Path
) -> tuple[dict[tuple[int, str], list[Any]], list[Problem]]:
    """Input files as absolute paths and images as checked ImageRefs, per case, in order."""
    resolved: dict[tuple[int, str], list[Any]] = {}
    problems: list[Problem] = []
    dirs = search_dirs(base_dir)  # the same for every file of the dataset
    for i, case in enumerate(_cases(raw)):
        if not isinstance(case, dict):
            continue
        for location, item in _content_items(case):
            kind, value = item.get("type"), item.get("value")
            if kind not in ("file", "image", "image_url") or not isinstance(value, str) or not value:
                continue
            where = ["evalcases", i, *location, "value"]
            label = f"case '{case.get('id')}'"
            if kind == "file":
                found, tried = resolve_file(value, base_dir, dirs)
                if found is None:
                    problems.append(source.problem(where, _not_found("file", value, tried, label)))
                else:
                    resolved.setdefault((i, "file"), []).append(str(found))
                continue
            image, problem = _image(kind, value, item.get("detail"), base_dir, dirs, label)
            if problem:
                problems.append(source.problem(where, problem))
            elif image is not None:
                resolved.setdefault((i, "image"), []).append(image)
    return resolved, problems


def _not_found(what: str, value: str, tried: list[Path], label: str | None = None) -> str:
    where = f" ({label})" if label else ""
    return f"{what} not found: {value}{where}; tried: {', '.join(str(p) for p in tried)}"


def _image(
    kind: str, value: str, detail: Any, base_dir: Path, dirs: list[Path], label: str
) -> tuple[ImageRef | None, str | None]:
    detail = detail if isinstance(detail, str) else None
    if value.startswith("data:"):
        media_type, _, problem = parse_data_uri(value)
        if problem:
            return None, f"{problem} ({label})"
        return ImageRef("data", value, media_type, detail), None
    if is_url(value):
        return ImageRef("url", value, None, detail), None
    if kind == "image_url":
        return None, f"image_url needs an http(s) URL or a data URI, got {value!r}; use type: image for a local file"
    found, tried = resolve_file(value, base_dir, dirs)
    if found is None:
        return None, _not_found("image", value, tried, label)
    media_type, problem = check_image_file(found)
    if problem:
        return None, f"unusable image {value} ({label}): {problem}"
    return ImageRef("file", str(found), media_type, detail), None


def evaluator_lists(model: Dataset) -> Iterable[tuple[list[str | int], list[Any]]]:
    yield ["execution", "evaluators"], model.execution.evaluators
    for i, case in enumerate(model.evalcases):
        if case.evaluators is not None:
            yield ["evalcases", i, "evaluators"], case.evaluators
        elif case.execution is not None and case.execution.evaluators is not None:
            yield ["evalcases", i, "execution", "evaluators"], case.execution.evaluators


_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".pl", ".php", ".r", ".jl", ".lua")


def _judge_problems(source: _Source, model: Dataset, dataset_dir: Path) -> list[Problem]:
    """Code judges that cannot possibly run: caught when the dataset loads, not mid-run."""
    from agentv_py.models.evaluators import CodeJudgeConfig

    problems: list[Problem] = []
    for base, evaluators in evaluator_lists(model):
        for e, config in enumerate(evaluators):
            if not isinstance(config, CodeJudgeConfig):
                continue
            where = [*base, e]
            cwd = (dataset_dir / config.cwd).resolve() if config.cwd else dataset_dir
            if not cwd.is_dir():
                problems.append(source.problem([*where, "cwd"], f"directory not found: {cwd}"))
                continue
            argv = script_argv(config.script)
            if argv[:2] == ["/bin/sh", "-c"]:
                continue  # shell syntax: the shell resolves it at run time
            program = argv[0]
            if "/" in program:
                path = (cwd / program).resolve()
                if not path.is_file():
                    problems.append(source.problem([*where, "script"], f"script not found: {program} (looked in {cwd})"))
                elif not os.access(path, os.X_OK):
                    problems.append(
                        source.problem(
                            [*where, "script"],
                            f"not executable: {program}; run `chmod +x {program}`, or name its interpreter "
                            f"first, e.g. script: [python3, {program}]",
                        )
                    )
            elif find_program(program) is None:
                problems.append(source.problem([*where, "script"], missing_program_message(program)))
            for arg in argv[1:]:
                looks_like_file = arg.lower().endswith(_SCRIPT_SUFFIXES) and not arg.startswith("-")
                if looks_like_file and not (cwd / arg).is_file():
                    problems.append(
                        source.problem([*where, "script"], f"script file not found: {arg} (relative to {cwd})")
                    )
    return problems


def _prompt_problems(source: _Source, model: Dataset, dataset_dir: Path) -> list[Problem]:
    """Prompt template files of llm_judge evaluators: found, readable, only known variables.
    The text is kept on the config, so a run reads each template once."""
    problems: list[Problem] = []
    dirs = search_dirs(dataset_dir)
    for base, evaluators in evaluator_lists(model):
        for e, config in enumerate(evaluators):
            if not isinstance(config, LlmJudgeConfig) or config.prompt is None or config.template is not None:
                continue
            where = [*base, e, "prompt"]
            value = config.prompt.strip()
            found, tried = resolve_file(value, dataset_dir, dirs)
            if found is None:
                problems.append(source.problem(where, _not_found("prompt file", value, tried)))
                continue
            try:
                text = found.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(source.problem(where, f"prompt file {value} is unreadable: {exc}"))
                continue
            problem = template_problem(text)
            if problem:
                problems.append(source.problem(where, f"prompt file {value}: {problem}"))
            else:
                config.set_template(text)
    return problems


def _path_warnings(source: _Source, model: Dataset) -> list[Problem]:
    """Malformed field paths resolve to "missing" at run time; say so once, at load time."""
    warnings = []
    for base, evaluators in evaluator_lists(model):
        for e, evaluator in enumerate(evaluators):
            if not isinstance(evaluator, FieldAccuracyConfig):
                continue
            for f, spec in enumerate(evaluator.fields):
                reason = path_problem(spec.path)
                if reason:
                    warnings.append(
                        source.problem([*base, e, "fields", f, "path"], f"{reason}; the field will always be missing")
                    )
    return warnings


# --------------------------------------------------------------------------- targets

TARGETS_FILENAMES = (Path(".agentv") / "targets.yaml", Path("targets.yaml"))


def discover_targets_file(dataset_dir: Path) -> Path | None:
    """First `.agentv/targets.yaml` or `targets.yaml` walking up from the dataset dir to the repo root,
    then the current directory."""
    for directory in search_dirs(dataset_dir):
        for name in TARGETS_FILENAMES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
    return None


@dataclass
class LoadedTargets:
    path: Path
    model: TargetsFile
    raw: dict[str, Any]
    source: _Source

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.model.targets]

    def get(self, name: str) -> TargetConfig | None:
        return next((t for t in self.model.targets if t.name == name), None)

    def with_env(self, name: str, environ: dict[str, str] | None = None) -> tuple[TargetConfig, list[str]]:
        """The named target with `${{ VAR }}` values read from the environment.

        Returns the target and the substituted values (secrets, to be redacted from messages).
        """
        environ = dict(os.environ) if environ is None else environ
        index = self.names.index(name)
        secrets: list[str] = []
        problems: list[Problem] = []

        def substitute(value: Any, parts: list[str | int]) -> Any:
            if isinstance(value, str):
                def one(match: re.Match[str]) -> str:
                    var = match.group(1)
                    if var not in environ:
                        problems.append(
                            self.source.problem(
                                parts, f"environment variable {var} is not set (used as ${{{{ {var} }}}})"
                            )
                        )
                        return ""
                    if environ[var]:
                        secrets.append(environ[var])
                    return environ[var]

                return ENV_RE.sub(one, value)
            if isinstance(value, dict):
                return {k: substitute(v, [*parts, k]) for k, v in value.items()}
            if isinstance(value, list):
                return [substitute(v, [*parts, i]) for i, v in enumerate(value)]
            return value

        raw_target = self.raw["targets"][index]
        substituted = substitute(raw_target, ["targets", index])
        if problems:
            raise ConfigError(problems)
        if substituted == raw_target:
            return self.model.targets[index], secrets
        wrapped = TargetsFile.model_validate({"targets": [substituted]})
        return wrapped.targets[0], secrets


def load_targets(path: str | Path) -> LoadedTargets:
    source, raw = _read_yaml(Path(path))
    model, problems = _validate(source, raw, TargetsFile)
    if problems:
        raise ConfigError(problems)
    assert model is not None
    return LoadedTargets(Path(path).resolve(), model, raw, source)


def select_target_name(targets: LoadedTargets, cli_name: str | None, dataset: Dataset) -> str:
    """`--target` > dataset `execution.target` > a target named `default`."""
    wanted = cli_name or dataset.execution.target or "default"
    if targets.get(wanted) is None:
        origin = (
            "--target" if cli_name else "execution.target in the dataset" if dataset.execution.target else "default"
        )
        available = ", ".join(targets.names) or "(none)"
        raise TargetError(
            f"target '{wanted}' (from {origin}) is not defined in {_display(targets.path)}. "
            f"Available targets: {available}",
            hint="pass --target NAME, or set execution.target in the dataset",
        )
    return wanted


def judge_target_problems(
    dataset: LoadedDataset, targets: LoadedTargets, default_judge: str | None, default_origin: str
) -> tuple[list[Problem], list[str]]:
    """Judge targets of LLM evaluators: each resolvable, defined, and (for cases with images)
    marked `vision: true`. Returns the problems and the judge target names the run needs."""
    source = dataset.source
    assert source is not None
    problems: list[Problem] = []
    needed: list[str] = []
    for base, evaluators in evaluator_lists(dataset.model):
        # The cases these evaluators judge: the suite's go to every case without its own list.
        if base == ["execution", "evaluators"]:
            judged = [c for c in dataset.cases if c.case.case_evaluators is None]
        else:
            judged = [dataset.cases[int(base[1])]]
        with_images = [c for c in judged if c.images]
        for e, config in enumerate(evaluators):
            if not isinstance(config, JUDGE_CONFIG_TYPES):
                continue
            label = f"{config.type} '{config.display_name}'"
            explicit = getattr(config, "target", None)
            name = explicit or default_judge
            if name is None:
                problems.append(source.problem(
                    [*base, e],
                    f"{label} needs a judge target: set target: NAME on it, execution.judge_target in the "
                    f"dataset, or judge_target on the eval target",
                ))
                continue
            origin = "target" if explicit else default_origin
            judge = targets.get(name)
            if judge is None:
                available = ", ".join(targets.names) or "(none)"
                problems.append(source.problem(
                    [*base, e, "target"] if origin == "target" else [*base, e],
                    f"{label}: judge target '{name}' (from {origin}) is not defined in "
                    f"{_display(targets.path)}. Available targets: {available}",
                ))
                continue
            if name not in needed:
                needed.append(name)
            if with_images and not judge.vision:
                more = f" (and {len(with_images) - 1} more)" if len(with_images) > 1 else ""
                problems.append(source.problem(
                    [*base, e],
                    f"{label}: judge target '{name}' is not marked vision: true, but case '{with_images[0].case.id}'"
                    f"{more} has images; set vision: true on '{name}' if its model accepts images, or choose "
                    "a vision judge with target: NAME",
                ))
    return problems, needed


def load_all(paths: Iterable[str | Path], loader: Callable[[Path], Any] = load_dataset) -> list[Problem]:
    """Problems across many files (validate reports all of them, not only the first file's)."""
    problems: list[Problem] = []
    for path in paths:
        try:
            loader(Path(path))
        except ConfigError as exc:
            problems.extend(exc.problems)
    return problems
