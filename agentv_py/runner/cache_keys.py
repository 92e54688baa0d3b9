"""Cache keys: everything an answer depends on, hashed into one string (docs/incremental.md).

A key is the SHA-256 of a JSON document holding the key format version, the kind (`target` or
`judge`), the target's config (without what cannot change an answer: its name, timeouts, retry
policy, the API key and auth headers), and what the call sends: a cli target's command as rendered
for the case (input files and images by content hash, {OUTPUT_FILE} and the attempt number by
fixed stand-ins), the case's question, and the content hash of every file of the project the
command template names (its script); a model target's or judge's messages (images by content
hash). A target's `cache_key:` is part of its config, so changing it changes every key.

Building a key runs nothing: it only reads files to hash them. None means "no key": the call is
made without the cache (a file that cannot be read is the call's own error to report).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentv_py.chat import ChatMessage
from agentv_py.media import ImageRef
from agentv_py.models.targets import TargetConfig
from agentv_py.prepared import PreparedCase
from agentv_py.process.command import UnsafeTemplate, render_command
from agentv_py.runner.chat_messages import case_messages
from agentv_py.runner.targets import CliRunner
from agentv_py.runner.worker_target import WorkerRunner
from agentv_py.scoring.jsontext import dumps

# Part of every key: a new agentv that changes what goes into a key, or what a stored value
# means, bumps it, and never reads an old entry.
KEY_VERSION = 2  # 2: the inherited environment is in process targets' keys

# Target settings that cannot change an answer: left out, so that renaming a target, changing
# its timeout or turning its cache on reuses what is stored.
NOT_IN_KEY = frozenset(
    {
        "name",
        "cache",
        "judge_target",
        "vision",
        "healthcheck",
        "timeout_seconds",
        "max_retries",
        "retry_initial_delay_ms",
        "retry_max_delay_ms",
        "retry_backoff_factor",
        "retry_status_codes",
        "workers",
        "verbose",
        "keep_temp_files",
        "provider_batching",
        "api_key",  # a secret; another key gets the same answer
    }
)
_SECRET_HEADER_WORDS = ("auth", "key", "token", "secret", "cookie")
OUTPUT_FILE_STANDIN = "<OUTPUT_FILE>"
ATTEMPT_STANDIN = "<ATTEMPT>"
_CHUNK = 1 << 20


class FileDigests:
    """SHA-256 of files' content, remembered per (path, size, mtime) for one run: a script named by
    every case's command is read once, and a file changed during the run is read again."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int, int], str] = {}
        self._lock = threading.Lock()

    def __call__(self, path: str | Path) -> str:
        """The file's digest (OSError when it cannot be read)."""
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            mark = (str(path), info.st_size, info.st_mtime_ns)
            with self._lock:
                known = self._known.get(mark)
            if known is not None:
                return known
            digest = hashlib.sha256()
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        value = "sha256:" + digest.hexdigest()
        with self._lock:
            self._known[mark] = value
        return value


def _same(text: str) -> str:
    return text


def key_of(kind: str, material: dict[str, Any], mask: Callable[[str], str] = _same) -> str:
    """The key of one call: `v<version>:<sha256 of the versioned material>`, the run's secrets
    masked in it first (`mask`): a secret is keyed by where it is used, never by its value or a
    digest of it, so rotating a token keeps every entry."""
    document = mask(dumps({"agentv_cache_key": KEY_VERSION, "kind": kind, **material}))
    return f"v{KEY_VERSION}:{hashlib.sha256(document.encode('utf-8', 'surrogatepass')).hexdigest()}"


def target_identity(config: TargetConfig) -> dict[str, Any]:
    """The target's settings that can change an answer: its config without NOT_IN_KEY and without
    headers that carry credentials (their values are secrets and do not change the answer)."""
    data = config.model_dump(mode="json", exclude=set(NOT_IN_KEY))
    headers = data.get("headers")
    if isinstance(headers, dict):
        data["headers"] = {
            name: value
            for name, value in headers.items()
            if not any(word in name.lower() for word in _SECRET_HEADER_WORDS)
        }
    return data


def is_inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


_SHELL_WORDS = frozenset({"&&", "||", ";", "|", "&", "then", "do", "else", "exec", "env", "time", "nice"})


def command_words(template: str) -> list[str]:
    """The words of a command template, a shell script inside it split too: the words of
    `sh -c 'cd tools && python3 extract.py {FILES}'` are those of the script as well."""
    pending, words = [template], []
    while pending:
        text = pending.pop(0)
        try:
            split = shlex.split(text, comments=False)
        except ValueError:  # unbalanced quotes (a shell template): plain words are enough here
            split = text.split()
        for word in split:
            words.append(word)
            if word != text and any(ch.isspace() for ch in word):  # a script given as one word (sh -c '...')
                pending.append(word)
    return words


def named_files(template: str, cwd: Path) -> dict[str, Path]:
    """The words of a command template that name an existing file, found from the command's
    working directory and from every directory a `cd` in it enters (`python3 ../scripts/x.py`,
    `sh -c 'python3 scripts/x.py {FILES}'`, `cd tools && python3 x.py`): word -> its path. Words
    with a placeholder are not files."""
    words = command_words(template)
    places = [cwd] + [cwd / after.rstrip(";") for word, after in zip(words, words[1:], strict=False) if word == "cd"]
    found: dict[str, Path] = {}
    for word in words:
        if not word or "{" in word or word in found or word in _SHELL_WORDS or any(c.isspace() for c in word):
            continue
        for place in places:
            path = Path(os.path.abspath(place / word.rstrip(";")))
            try:
                if path.is_file():
                    found[word] = path
                    break
            except OSError:  # unreadable: the command's own error to report
                continue
    return found


# Inherited variables that describe the session, terminal, host or CI (or batch) job, not the
# program's input: left out of every key, so that a new shell, terminal or CI run reuses the cache,
# and out of the target's fingerprint, so that the shards of one eval on several machines (a CI
# matrix, a Kubernetes Indexed Job, a Slurm array) can be merged (`runner.target_fingerprint`).
SESSION_VARIABLES = frozenset({
    "PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLORTERM", "COLORFGBG", "COLUMNS", "LINES", "DISPLAY",
    "WAYLAND_DISPLAY", "WINDOWID", "MAIL", "HISTFILE", "HISTSIZE", "HISTFILESIZE", "HISTCONTROL", "PS1",
    "PS2", "PS4", "PROMPT_COMMAND", "LS_COLORS", "LSCOLORS", "GPG_TTY", "TMUX", "TMUX_PANE", "STY", "WINDOW",
    "DBUS_SESSION_BUS_ADDRESS", "INVOCATION_ID", "JOURNAL_STREAM", "MANAGERPID", "SYSTEMD_EXEC_PID",
    "VTE_VERSION", "KONSOLE_VERSION", "PYTEST_CURRENT_TEST", "FORCE_COLOR", "NO_COLOR", "CLICOLOR",
    "HOSTNAME", "JOB_COMPLETION_INDEX",
})  # fmt: skip
SESSION_PREFIXES = (
    "SSH_", "XDG_SESSION_", "XDG_RUNTIME_DIR", "XDG_SEAT", "XDG_VTNR", "TERM_", "ITERM_", "VSCODE_", "KITTY_",
    "WT_", "LC_TERMINAL", "GITHUB_", "RUNNER_", "CI_", "BUILDKITE", "CIRCLE", "TRAVIS", "AGENTV_",
    "SLURM", "PBS_", "LSB_", "SGE_", "AWS_BATCH_",
)  # fmt: skip
# A variable whose name holds one of these is a secret: keyed by its name, never its value.
SECRET_NAME_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "PRIVATE")
SECRET_STANDIN = "<secret>"


def inherited_environment(environ: Mapping[str, str], ignore: Sequence[str] = ()) -> dict[str, str]:
    """The environment a command or worker inherits, as key material: every variable by value,
    except session, terminal and CI bookkeeping (SESSION_VARIABLES, SESSION_PREFIXES) and the
    target's own `cache_env_ignore` patterns (left out), and secrets by name (SECRET_STANDIN):
    an extractor that reads `MODEL` answers again when `MODEL` changes, a rotated token keeps
    every entry."""
    material: dict[str, str] = {}
    for name in sorted(environ):
        upper = name.upper()
        if upper in SESSION_VARIABLES or upper.startswith(SESSION_PREFIXES):
            continue
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in ignore):
            continue
        secret = any(word in upper for word in SECRET_NAME_WORDS)
        material[name] = SECRET_STANDIN if secret else environ[name]
    return material


def input_digests(case: PreparedCase, digests: FileDigests) -> tuple[list[str], list[str]]:
    """The content hash of every input file and image of a case (OSError or ValueError when one
    cannot be read)."""
    return [digests(path) for path in case.file_paths], [image_digest(image, digests) for image in case.images]


def worker_case_key(
    runner: WorkerRunner,
    case: PreparedCase,
    programs: dict[str, str],
    digests: FileDigests,
    mask: Callable[[str], str] = _same,
    environment: Mapping[str, str] | None = None,
) -> str | None:
    """The key of a worker target's answer to a case (`mode: worker`, `provider: python`): its
    config, the hashes of its program (`programs`), the content of every file and image, and the
    question: what its request carries. None: a file cannot be read (the call reports it)."""
    try:
        files, images = input_digests(case, digests)
    except (OSError, ValueError):
        return None
    material = {
        "target": target_identity(runner.config),
        "programs": programs,
        "environment": environment or {},
        "worker": True,
        "files": files,
        "images": images,
        "prompt": case.question,
    }
    return key_of("target", material, mask)


def image_digest(image: ImageRef, digests: FileDigests) -> str:
    """An image's content hash: a file's bytes, a data URI's text; a URL is keyed by itself (its
    content is fetched by the provider, out of agentv's sight)."""
    if image.source == "file":
        return digests(image.value)
    if image.source == "data":
        return "sha256:" + hashlib.sha256(image.value.encode()).hexdigest()
    return "url:" + image.value


def messages_material(messages: Sequence[ChatMessage], digests: FileDigests) -> list[dict[str, Any]]:
    """Chat messages as key material: text as is, images by content hash (and their detail)."""
    return [
        {
            "role": message.role,
            "parts": [
                part
                if isinstance(part, str)
                else {"image": image_digest(part, digests), "media_type": part.media_type, "detail": part.detail}
                for part in message.parts
            ],
        }
        for message in messages
    ]


def cli_case_key(
    runner: CliRunner,
    case: PreparedCase,
    programs: dict[str, str],
    digests: FileDigests,
    mask: Callable[[str], str] = _same,
    environment: Mapping[str, str] | None = None,
) -> str | None:
    """The key of a cli target's answer to a case: its config, the command rendered for the case
    (files and images by stand-ins `<sha256>/basename`, {OUTPUT_FILE} and {ATTEMPT} by fixed
    stand-ins), the content of every file and image, the question, and the hashes of the project's
    files the template names (`programs`). None: no key (a file cannot be read, or the template
    cannot be rendered: the call reports it)."""
    try:
        files, images = input_digests(case, digests)
        values = runner.case_values(
            case,
            1,
            images=[f"<{digest}>/{image.name}" for digest, image in zip(images, case.images, strict=True)],
            files=[f"<{digest}>/{_basename(path)}" for digest, path in zip(files, case.file_paths, strict=True)],
        )
        values["ATTEMPT"] = [ATTEMPT_STANDIN]
        if "{OUTPUT_FILE}" in runner.config.command_template:
            values["OUTPUT_FILE"] = [OUTPUT_FILE_STANDIN]
        command = render_command(runner.config.command_template, values)
    except (OSError, ValueError, UnsafeTemplate):
        return None
    material = {
        "target": target_identity(runner.config),
        "programs": programs,
        "environment": environment or {},
        "argv": command.argv,
        "shell": command.shell,
        "files": files,
        "images": images,
        "prompt": case.question,
    }
    return key_of("target", material, mask)


def model_case_key(
    config: TargetConfig, case: PreparedCase, digests: FileDigests, mask: Callable[[str], str] = _same
) -> str | None:
    """The key of a model target's answer to a case: its config (no secrets) and the messages as
    sent, images by content hash. None: the messages cannot be built (the call reports why)."""
    try:
        messages = case_messages(case)
        material = {"target": target_identity(config), "messages": messages_material(messages, digests)}
    except (OSError, ValueError):
        return None
    return key_of("target", material, mask)


def chat_key(
    config: TargetConfig,
    programs: dict[str, str],
    messages: Sequence[ChatMessage],
    digests: FileDigests,
    mask: Callable[[str], str] = _same,
    environment: Mapping[str, str] | None = None,
) -> str | None:
    """The key of a judge's reply: the judge target's config (no secrets; a cli judge's programs
    too) and the rendered messages, images by content hash. None: an image cannot be read."""
    try:
        material = {
            "target": target_identity(config),
            "programs": programs,
            "environment": environment or {},
            "messages": messages_material(messages, digests),
        }
    except (OSError, ValueError):
        return None
    return key_of("judge", material, mask)


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]
