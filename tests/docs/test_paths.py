"""Every file, module and section README.md and docs/*.md name exists:

- a repository path, in a code span or not (`scripts/bench_runner.py`, `evals/vision/`, `tests/...`,
  `docs/...`, `fixtures/...`, `agentv_py/...`; a `:LINE` after it allowed), or a path inside the
  package (`runner/ray_driver.py`, `scoring/assignment.py`, `process/command.needs_shell`);
- every module docs/architecture.md's module map names (`markdown.py`): a file of the package;
- a relative link, and the section its `#anchor` names (GitHub's heading ids);
- `agentv_py.module.name` in a code span, and each name a documented Python example imports from
  `agentv_py`: importable.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.docs.snippets import DOCS, REPO_ROOT

PACKAGE = REPO_ROOT / "agentv_py"
SUBPACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
REPO_PATH = re.compile(rf"^(scripts|agentv_py|evals|docs|tests|fixtures|{'|'.join(SUBPACKAGES)})/[\w./-]*$")
FENCE = re.compile(r"^\s*```(\S*)\s*$")


def prose(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of `path` outside fenced blocks."""
    found, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            found.append((number, line))
    return found


def spans(path: Path) -> list[tuple[str, str]]:
    """(where, text) of every code span of `path`."""
    where = path.relative_to(REPO_ROOT).as_posix()
    return [
        (f"{where}:{number}", match.group(2).strip())
        for number, line in prose(path)
        for match in re.finditer(r"(`+)(.+?)\1", line)
    ]


def slug(heading: str) -> str:
    """GitHub's id of a heading: lower case, punctuation dropped, spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(line.lstrip("#")) for _, line in prose(path) if re.match(r"^#{1,6} ", line)}


def missing_path(text: str) -> str | None:
    """What is missing of a code span that is a repository path, else None."""
    path = re.sub(r":\d+$", "", text)
    if not REPO_PATH.match(path):
        return None
    if path.split("/")[0] in SUBPACKAGES and not (REPO_ROOT / path).exists():
        dotted = "agentv_py." + path.replace("/", ".")  # `process/command.needs_shell`: a module's name
        if (PACKAGE / path).exists() or resolves(dotted):
            return None
        return f"agentv_py/{path}"
    return None if (REPO_ROOT / path).exists() else path


def plain_paths(path: Path) -> list[tuple[str, str]]:
    """(where, path) of every repository path written outside code spans and link targets."""
    where = path.relative_to(REPO_ROOT).as_posix()
    found = []
    for number, line in prose(path):
        bare = re.sub(r"\]\([^)]*\)", " ", re.sub(r"(`+).+?\1", " ", line))
        for match in re.finditer(r"(?<![\w./-])((?:scripts|agentv_py|evals|docs|tests|fixtures)/[\w./-]*\w)", bare):
            found.append((f"{where}:{number}", match.group(1)))
    return found


def test_every_repository_path_exists():
    named = [mention for doc in DOCS for mention in spans(doc) + plain_paths(doc)]
    assert len(named) > 100
    assert [f"{where}: {text}" for where, text in named if missing_path(text)] == []


def test_the_architecture_names_modules_that_exist():
    modules = {path.name for path in PACKAGE.rglob("*.py")}
    found = spans(REPO_ROOT / "docs" / "architecture.md")
    named = [(w, t) for w, t in found if re.fullmatch(r"[\w/]+\.py", t) and not REPO_PATH.match(t)]
    assert len(named) > 50
    assert [f"{where}: `{text}`" for where, text in named if text.rsplit("/", 1)[-1] not in modules] == []


def test_every_link_and_anchor_exists():
    broken = []
    for doc in DOCS:
        where = doc.relative_to(REPO_ROOT).as_posix()
        for number, line in prose(doc):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue
                file, _, anchor = target.partition("#")
                linked = (doc.parent / file).resolve() if file else doc
                if not linked.exists():
                    broken.append(f"{where}:{number}: {target}: no such file")
                elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                    broken.append(f"{where}:{number}: {target}: no such section")
    assert broken == []


def dotted_names() -> list[tuple[str, str]]:
    """(where, `agentv_py.a.b`) for code spans, and (where, `agentv_py.a.name`) for each name a
    documented Python block imports from the package."""
    found = []
    for doc in DOCS:
        for where, text in spans(doc):
            name = re.match(r"^(agentv_py(\.\w+)+)(\(.*\))?$", text)
            if name:
                found.append((where, name.group(1)))
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"```python\n(.*?)```", text, re.S):
            for module, names in re.findall(r"^\s*from (agentv_py[\w.]*) import ([\w, ]+)$", block.group(1), re.M):
                line = text[: block.start()].count("\n") + 1
                found += [(f"{doc.relative_to(REPO_ROOT)}:{line}", f"{module}.{n.strip()}") for n in names.split(",")]
    return found


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


@pytest.mark.parametrize("where, dotted", dotted_names(), ids=lambda v: v)
def test_every_python_name_the_docs_give_exists(where, dotted):
    assert resolves(dotted), f"{where}: {dotted}"
