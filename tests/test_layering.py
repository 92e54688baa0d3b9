"""The package's layers, read from the source with `ast`: every import goes down, never up or
sideways into a layer it may not use, and no module imports itself back through a cycle.

Every import counts, wherever it is written (module level, inside a function, under
TYPE_CHECKING): a lazy import is still a dependency.

    cli -> session -> loading / runner / report -> evaluators -> process, chat, locate, prepared
        -> scoring -> models
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "agentv_py"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# Module prefix -> layer (the longest matching prefix wins).
LAYER_OF = {
    "agentv_py.models": "models",
    "agentv_py.errors": "errors",
    "agentv_py.extras": "extras",
    "agentv_py.scoring": "scoring",
    "agentv_py.media": "media",
    "agentv_py.chat": "chat",
    "agentv_py.locate": "locate",
    "agentv_py.prompts": "prompts",
    "agentv_py.prepared": "prepared",
    "agentv_py.process": "process",
    "agentv_py.evaluators": "evaluators",
    "agentv_py.loading": "loading",
    "agentv_py.runner": "runner",
    "agentv_py.report": "report",
    "agentv_py.session": "session",
    "agentv_py.rescore": "session",  # `agentv rescore`: beside session, which it builds on
    "agentv_py.rescore_plan": "session",  # planning `agentv rescore`
    "agentv_py.stored_rows": "session",  # the results file rescore scores again
    "agentv_py.explain": "session",  # `agentv explain`: loads the dataset for option sources
    "agentv_py.run_reports": "session",  # the reports a run writes: for eval, rescore, report and run_eval
    "agentv_py.eval_plan": "session",  # what an eval is asked to do and what planning made of it
    "agentv_py.preflight": "session",  # the checks before a run (eval and validate)
    "agentv_py.recorder": "session",  # a run's results file and manifest
    "agentv_py.reuse_plan": "session",  # --resume, --rerun-failed, --retry-errors
    "agentv_py.repeat_plan": "session",  # --repeat, --rejudge: refusals, a resumed repeated run
    "agentv_py.run_spec": "session",  # the frozen spec a plan ends in
    "agentv_py.pipeline": "session",  # the one run loop: a spec executed
    "agentv_py.schema": "schema",
    "agentv_py.schema_442": "schema",
    "agentv_py.judge": "judge-sdk",
    "agentv_py.judge_input": "judge-sdk",
    "agentv_py.judge_proxy": "judge-sdk",
    "agentv_py.judge_prompt": "judge-sdk",
    "agentv_py.worker": "judge-sdk",  # runs in workers' own interpreters: standard library only
    "agentv_py.cli": "cli",
    "agentv_py.__main__": "cli",
    "agentv_py": "api",
}

BELOW_THE_API = {
    *("errors", "extras", "models", "scoring", "media", "chat", "locate", "prompts", "prepared", "process"),
    *("evaluators", "loading", "runner", "report", "session", "schema"),
}

# Layer -> the other layers it may import. Anything not listed is a wrong-way edge.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "extras": {"models"},  # which extra a feature needs, and whether it is installed
    "models": set(),  # models import nothing from the package
    "scoring": {"models"},  # pure functions over models
    "media": set(),
    "locate": set(),
    "chat": {"media"},
    "process": {"models"},
    "prepared": {"errors", "media", "models"},
    "prompts": {"locate", "models"},
    "evaluators": {"models", "scoring", "process", "chat", "media", "locate", "prompts", "errors"},  # never runner
    "loading": {"models", "scoring", "process", "media", "locate", "prepared", "prompts", "errors", "extras"},
    # the runner reads prepared cases, never the loader
    "runner": {"models", "scoring", "process", "chat", "media", "locate", "prepared", "errors", "evaluators", "extras"},
    "report": {"models", "scoring"},
    "session": {"loading", "runner", "report", "models", "prepared", "errors", "locate", "extras"},
    "schema": {"models"},  # JSON Schemas generated from the models, nothing else
    "judge-sdk": {"scoring"},  # runs in judges' own interpreters: nothing heavy
    "api": BELOW_THE_API,  # the public API re-exports from every library layer
    "cli": {"api", *BELOW_THE_API},
}


def layer(module: str) -> str:
    best = max((p for p in LAYER_OF if module == p or module.startswith(p + ".")), key=len)
    return LAYER_OF[best]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(module: str) -> bool:
    relative = Path(*module.split("."))
    return (ROOT.parent / relative).with_suffix(".py").is_file() or (ROOT.parent / relative / "__init__.py").is_file()


def imports_of(source: str, module: str, is_package: bool) -> Iterator[str]:
    """The package modules a source file imports (submodules resolved where they exist)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = module.split(".") if is_package else module.split(".")[:-1]
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not (base == PACKAGE or base.startswith(PACKAGE + ".")):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield candidate if _exists(candidate) else base


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = module_name(path)
        found = set(imports_of(path.read_text(encoding="utf-8"), name, path.name == "__init__.py"))
        edges[name] = found - {name}
    return edges


def wrong_way(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            here, there = layer(source), layer(target)
            if here != there and there not in ALLOWED[here]:
                bad.append(f"{source} ({here}) imports {target} ({there})")
    return bad


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer_and_every_layer_a_rule():
    edges = graph()
    assert len(edges) > 40
    assert {layer(m) for m in edges} <= set(ALLOWED)


def test_no_import_goes_the_wrong_way():
    assert wrong_way(graph()) == []


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_no_command_module_imports_another():
    """The CLI is thin: each command module parses its options and calls the library; what two
    commands share lives in the library (`run_reports`) or `cli.base`, never in a command."""
    edges = graph()
    commands = {m for m in edges if m.startswith("agentv_py.cli.") and m.endswith("_cmd")}
    assert len(commands) >= 10
    assert sorted((m, other) for m in commands for other in edges[m] & commands) == []


MAX_LINES = 400  # the house rule: a module longer than this is split by job


def test_no_module_is_over_400_lines():
    over = {}
    for path in sorted(ROOT.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        name = path.relative_to(ROOT.parent).as_posix()
        if lines > MAX_LINES:
            over[name] = lines
    assert over == {}


@pytest.mark.parametrize(
    "source, target, allowed",
    [
        ("agentv_py.models.results", "agentv_py.scoring.case", False),
        ("agentv_py.scoring.case", "agentv_py.models.results", True),
        ("agentv_py.scoring.match", "agentv_py.evaluators.base", False),
        ("agentv_py.evaluators.code_judge", "agentv_py.runner.targets", False),
        ("agentv_py.evaluators.code_judge", "agentv_py.process.spawn", True),
        ("agentv_py.runner.engine", "agentv_py.loading.dataset", False),
        ("agentv_py.runner.engine", "agentv_py.prepared", True),
        ("agentv_py.report.summary", "agentv_py.runner.run", False),
        ("agentv_py.judge", "agentv_py.models.results", False),
        ("agentv_py.cli.eval_cmd", "agentv_py.session", True),
        ("agentv_py.cli.schema_cmd", "agentv_py.schema", True),
        ("agentv_py.schema", "agentv_py.models.dataset", True),
        ("agentv_py.schema", "agentv_py.loading.dataset", False),
    ],
    ids=lambda v: v if isinstance(v, str) else str(v),
)
def test_the_rules_catch_a_wrong_way_edge(source, target, allowed):
    assert (wrong_way({source: {target}}) == []) is allowed


def test_the_reader_sees_lazy_relative_and_type_checking_imports():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from agentv_py.runner import engine\n"
        "def f():\n    from ..loading import load_dataset\n    import agentv_py.report.jsonl\n"
        "from . import base\n"
    )
    found = set(imports_of(source, "agentv_py.evaluators.code_judge", is_package=False))
    assert found == {
        "agentv_py.runner.engine",
        "agentv_py.loading",
        "agentv_py.report.jsonl",
        "agentv_py.evaluators.base",
    }


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _row_writes(source: str) -> list[str]:
    """Assignments to an attribute of a result row (`row.x = ...`, `row.trace.cache = ...`, for any
    name `row`, `*_row`, `kept`...): a row is complete when `score_case` returns it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        )
        for target in targets:
            base = target
            while isinstance(base, ast.Attribute):
                base = base.value
            if base is not target and isinstance(base, ast.Name) and (base.id == "row" or base.id.endswith("_row")):
                found.append(f"{ast.unparse(target)} (line {node.lineno})")
    return found


def test_no_module_changes_a_finished_row():
    """A row is born complete (`runner.engine.score_case` takes its run id and provenance) and
    redaction makes a new one: nothing assigns to a row's fields afterwards."""
    writes = {}
    for path in sorted(ROOT.rglob("*.py")):
        found = _row_writes(path.read_text(encoding="utf-8"))
        if found:
            writes[path.relative_to(ROOT.parent).as_posix()] = found
    assert writes == {}


def test_the_row_rule_sees_nested_and_augmented_writes():
    assert _row_writes("row.run_id = 'x'\nrow.trace.cache = 'hit'\nold_row.attempts += 1\nrows = []\nx.row = 1") == [
        "row.run_id (line 1)",
        "row.trace.cache (line 2)",
        "old_row.attempts (line 3)",
    ]
