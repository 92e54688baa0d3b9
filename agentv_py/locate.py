"""Where dataset-relative files are looked up (SPEC §1): the dataset's directory, its ancestors
up to the repository root (every ancestor outside a repository), then the current directory.
One rule for every file a dataset names: input files, images, prompt templates.

Targets files are code the user runs, so they are looked for only inside the project
(`targets_search_dirs`): the dataset's directory up to the repository root; outside a repository,
the dataset's directory and the current directory.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path


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


def targets_search_dirs(base_dir: Path) -> list[Path]:
    """Where a targets file is looked for: `base_dir` and its ancestors up to the repository
    root, then the current directory if it is inside that repository; outside a repository,
    `base_dir` and the current directory only. Never a directory outside the project."""
    base_dir = base_dir.resolve()
    cwd = Path.cwd().resolve()
    root = repo_root(base_dir)
    dirs = [base_dir]
    if root is not None:
        for parent in base_dir.parents if base_dir != root else ():
            dirs.append(parent)
            if parent == root:
                break
        inside = cwd == root or root in cwd.parents
    else:
        inside = True
    if inside and cwd not in dirs:
        dirs.append(cwd)
    return dirs


def resolve_file(value: str, base_dir: Path, dirs: list[Path] | None = None) -> tuple[Path | None, list[Path]]:
    """Resolve a dataset-relative file path; returns (found path or None, every place tried).

    `dirs` is `search_dirs(base_dir)` when the caller resolves many files from one place.
    """
    candidate = Path(os.path.expanduser(value))
    if candidate.is_absolute():
        return (candidate if candidate.is_file() else None), [candidate]
    # Lexical normalisation of an absolute directory: no realpath syscalls per file.
    paths = [
        os.path.normpath(os.path.join(directory, candidate))
        for directory in (dirs if dirs is not None else search_dirs(base_dir))
    ]
    for number, path in enumerate(paths):
        if os.path.isfile(path):
            return Path(path), [Path(tried) for tried in paths[: number + 1]]
    return None, [Path(path) for path in paths]


def script_path(command: list[str], dataset_dir: Path) -> list[str]:
    """The command with its last item (the script) found from the dataset's directory up to the
    repository's root (AgentV's search), as an absolute path; as written when it is not found."""
    script = command[-1]
    for directory in search_dirs(dataset_dir):
        found = directory / script
        if found.is_file():
            return [*command[:-1], str(found.resolve())]
    return list(command)


def working_dir(base_dir: Path, cwd: str | None) -> Path:
    """A command's working directory: its `cwd:` relative to the dataset's directory, else that
    directory (targets, healthchecks and code judges alike)."""
    return (base_dir / cwd).resolve() if cwd else base_dir


def not_found(what: str, value: str, tried: list[Path], label: str | None = None) -> str:
    """`<what> not found: <value> (<label>); tried: <every place>`."""
    where = f" ({label})" if label else ""
    return f"{what} not found: {value}{where}; tried: {', '.join(str(p) for p in tried)}"


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same resolved path (symlinks followed, whether it
    exists yet or not), or one existing file reached twice (a hard link)."""
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except (OSError, RuntimeError):  # a symlink loop, an unreadable directory: not provably one file
        return False


Role = tuple[str, "Path | None"]  # (what the path is to the command, the path; None: not given)


def inputs_among(outputs: list[Role], files: Iterable[Role]) -> list[Role]:
    """Of `files` (many: every case's input files, read lazily), those an existing output path
    already is: one `stat` per file, and none at all when no output exists yet (a new file
    cannot be an input)."""
    marks = set()
    for _, path in outputs:
        try:
            info = os.stat(path) if path is not None else None
        except OSError:
            continue
        if info is not None and stat.S_ISREG(info.st_mode):
            marks.add((info.st_dev, info.st_ino))
    if not marks:
        return []
    found: list[Role] = []
    for role, path in files:
        try:
            info = os.stat(path) if path is not None else None
        except OSError:
            continue
        if info is not None and (info.st_dev, info.st_ino) in marks:
            found.append((role, path))
    return found


def output_clash(outputs: list[Role], inputs: list[Role]) -> str | None:
    """Why an output would replace one of the command's inputs or another of its outputs, naming
    both roles (`--html dataset.yaml is the dataset (dataset.yaml): ...`); None when none does."""
    seen: list[tuple[str, Path]] = []
    for role, path in outputs:
        if path is None:
            continue
        for other_role, other in inputs:
            if other is not None and same_file(path, other):
                return f"{role} {path} is {other_role} ({other}): an output never replaces an input; pass another path"
        for other_role, other in seen:
            if same_file(path, other):
                return f"{role} {path} is also {other_role}: each output needs a path of its own"
        seen.append((role, path))
    return None
