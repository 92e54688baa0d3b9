"""A target's program and environment, hashed (docs/incremental.md): the project files its
command names or its callable's package holds (`program_digests`, `python_digests`: part of every
cache key of the target), and the target's fingerprint, part by part (`target_fingerprint`), which
a run manifest records so that `--resume`, `--rerun-failed` and `agentv merge` can say which part
of the target changed between the runs whose rows they put together.

The fingerprint covers what the answer cache keys: the command (or callable), every other setting
that can change an answer (`cache_keys.target_identity`), the content of the program's files and
the environment the program runs with, with the cache's exceptions (session and CI bookkeeping,
`cache_env_ignore`, secrets by name only). It records digests only, never a value.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from agentv_py.locate import working_dir
from agentv_py.models.manifest import TargetFingerprint
from agentv_py.models.targets import CliTarget, PythonTarget, TargetConfig
from agentv_py.process.redact import Redactor
from agentv_py.runner.cache_keys import (
    SECRET_NAME_WORDS,
    SECRET_STANDIN,
    FileDigests,
    inherited_environment,
    is_inside,
    named_files,
    target_identity,
)
from agentv_py.runner.worker_target import worker_argv
from agentv_py.scoring.jsontext import dumps

PACKAGE_FILES = 500  # Python files of a callable's package hashed at most (more: the key says so)


def program_files(config: CliTarget, cwd: Path, project: Sequence[Path]) -> dict[str, Path]:
    """The files the command template names (`named_files`) inside the project (`project`: the
    directories that count), by the word that names each: files outside it (the interpreter) are
    not the target's program."""
    found: dict[str, Path] = {}
    for word, path in named_files(config.command_template, cwd).items():
        try:
            if is_inside(Path(os.path.realpath(path)), project):
                found[word] = path
        except OSError:  # unreadable: the command's own error to report
            continue
    return found


def program_digests(config: CliTarget, cwd: Path, project: Sequence[Path], digests: FileDigests) -> dict[str, str]:
    """The content hash of every file of the command's program (`program_files`), by its word."""
    found: dict[str, str] = {}
    for word, path in program_files(config, cwd, project).items():
        try:
            found[word] = digests(path)
        except OSError:  # unreadable: the command's own error to report, the key just lacks it
            continue
    return found


def _python_candidates(
    config: PythonTarget, argv: Sequence[str], project: Sequence[Path]
) -> Iterator[tuple[Path, list[Path], bool]]:
    """For each `--path` directory a callable's worker is given, in order: the directory, the
    Python files of the callable's top-level package (or its module) there inside the project,
    and whether the package has more than PACKAGE_FILES of them."""
    dirs = [Path(argv[i + 1]) for i, word in enumerate(argv[:-1]) if word == "--path"]
    top = config.callable.partition(":")[0].split(".")[0]
    for directory in dirs:
        package, module = directory / top, directory / f"{top}.py"
        files = sorted(package.rglob("*.py"))[: PACKAGE_FILES + 1] if package.is_dir() else [module]
        inside: list[Path] = []
        for path in files:
            try:
                if path.is_file() and is_inside(Path(os.path.realpath(path)), project):
                    inside.append(path)
            except OSError:
                continue
        yield directory, inside, len(files) > PACKAGE_FILES


def python_digests(
    config: PythonTarget, argv: Sequence[str], project: Sequence[Path], digests: FileDigests
) -> dict[str, str]:
    """The content hash of every Python file of a `provider: python` callable's top-level package
    (or of its module), found on the `--path` directories its worker is given, inside the project:
    a change to the extractor's code changes the key."""
    found: dict[str, str] = {}
    for directory, files, over in _python_candidates(config, argv, project):
        for path in files:
            try:
                found[str(path.relative_to(directory))] = digests(path)
            except OSError:
                continue
        if over:
            found["<more files>"] = f"over {PACKAGE_FILES}: set cache_key"
        if found:
            break
    return found


def _program(config: TargetConfig, dataset_dir: Path, project: Sequence[Path]) -> list[Path]:
    """The files of a target's program: a cli (or worker) command's, a callable's package's."""
    if isinstance(config, CliTarget):
        return list(program_files(config, working_dir(dataset_dir, config.cwd), project).values())
    if isinstance(config, PythonTarget):
        for _, files, over in _python_candidates(config, worker_argv(config, dataset_dir), project):
            if files or over:
                return files
    return []


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def target_fingerprint(
    config: TargetConfig,
    dataset_dir: Path,
    project: Sequence[Path],
    secrets: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> TargetFingerprint:
    """The target's fingerprint as a manifest records it: the digest of its command (a cli
    target's template, a python target's callable), of each other setting the cache keys, of each
    file of its program (by its path from `dataset_dir`) and of each variable of the environment
    its processes run with (`environ`, default agentv's own, as the cache keys it, then the
    target's `env:`). The run's `secrets` are masked before anything is hashed, and a variable
    whose name says it is a secret counts by its name only, as in the cache's keys: a rotated
    token is not another target."""
    mask = Redactor(list(secrets))
    identity = target_identity(config)
    command = ""
    env: dict[str, str] = {}
    if isinstance(config, CliTarget | PythonTarget):
        command = str(identity.pop("command_template" if isinstance(config, CliTarget) else "callable", ""))
        identity.pop("env", None)
        env = inherited_environment(os.environ if environ is None else environ, config.cache_env_ignore)
        for name, value in config.env.items():
            env[name] = SECRET_STANDIN if any(word in name.upper() for word in SECRET_NAME_WORDS) else value
    base = os.path.abspath(dataset_dir)
    digests = FileDigests()
    scripts: dict[str, str] = {}
    for path in _program(config, dataset_dir, project):
        try:
            scripts[os.path.relpath(path, base)] = digests(path).removeprefix("sha256:")
        except OSError:  # unreadable: the command's own error to report
            continue
    return TargetFingerprint(
        command=_sha256(mask(command)) if command else "",
        settings={key: _sha256(mask(dumps(value))) for key, value in sorted(identity.items())},
        scripts=dict(sorted(scripts.items())),
        env={name: _sha256(mask(value)) for name, value in sorted(env.items())},
    )
