"""The `agentv` command line: thin commands, one error boundary, documented exit codes.

The app, the boundary and the exit codes live in `agentv_py.cli.base`; importing the command
modules here registers their commands on it.
"""

from __future__ import annotations

from agentv_py.cli import cache_cmd as _cache_cmd  # noqa: F401  (registers the commands)
from agentv_py.cli import compare_cmd as _compare_cmd  # noqa: F401
from agentv_py.cli import eval_cmd as _eval_cmd  # noqa: F401
from agentv_py.cli import explain_cmd as _explain_cmd  # noqa: F401
from agentv_py.cli import merge_cmd as _merge_cmd  # noqa: F401
from agentv_py.cli import metrics_cmd as _metrics_cmd  # noqa: F401
from agentv_py.cli import report_cmd as _report_cmd  # noqa: F401
from agentv_py.cli import rescore_cmd as _rescore_cmd  # noqa: F401
from agentv_py.cli import schema_cmd as _schema_cmd  # noqa: F401
from agentv_py.cli import validate_cmd as _validate_cmd  # noqa: F401
from agentv_py.cli.base import app


def main() -> None:
    app(prog_name="agentv")


__all__ = ["app", "main"]
