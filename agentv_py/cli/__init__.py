"""The `agentv` command line: thin commands, one error boundary, documented exit codes.

The app, the boundary and the exit codes live in `agentv_py.cli.base`; importing a command module
registers its command on it. `app` here is the app with every command. `main` (the `agentv`
console script) registers only the command its command line names when the first argument is a
command's name: Typer turns each registered command's signature into click parameters on every
run, and a run uses one. Anything else (no argument, help, the version, an unknown name) gets
every command, so help and errors list them all.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

# Each command's name and the module that registers it, in the order `agentv --help` lists them.
COMMAND_MODULES = {
    "cache": "cache_cmd",
    "compare": "compare_cmd",
    "eval": "eval_cmd",
    "explain": "explain_cmd",
    "merge": "merge_cmd",
    "metrics": "metrics_cmd",
    "plan-size": "plan_size_cmd",
    "report": "report_cmd",
    "rescore": "rescore_cmd",
    "schema": "schema_cmd",
    "validate": "validate_cmd",
}


def _register(*names: str) -> typer.Typer:
    """The app, with the commands of `names` registered (every command when none are named)."""
    for name in names or COMMAND_MODULES:
        importlib.import_module(f"agentv_py.cli.{COMMAND_MODULES[name]}")
    from agentv_py.cli.base import app

    return app


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        app = _register()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    first = sys.argv[1] if len(sys.argv) > 1 else None
    app = _register(first) if first in COMMAND_MODULES else _register()
    app(prog_name="agentv")


__all__ = ["app", "main"]
