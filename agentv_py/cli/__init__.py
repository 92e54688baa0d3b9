"""The `agentv` command line: thin commands, one error boundary, documented exit codes."""

from __future__ import annotations

import functools
import sys
import traceback
from typing import Any, Callable, TypeVar

import typer

from agentv_py import __version__

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_CONFIG = 2
EXIT_INTERNAL = 3
EXIT_CASE_ERRORS = 4
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = """Exit codes:

\b
  0    gate passed
  1    gate failed: some case did not pass, or mean score < --threshold
  2    usage or dataset/target configuration error (nothing was run)
  3    internal error (a bug: traceback shown)
  4    one or more cases errored (target or judge could not run); takes precedence over 1
  130  interrupted (Ctrl-C or SIGTERM); rows of finished cases are kept
"""

app = typer.Typer(
    name="agentv",
    help="Eval runner for structured outputs: run your extractor per case, score every field, gate CI.",
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])


def boundary(func: F) -> F:
    """The one place domain errors become messages and exit codes."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from agentv_py.errors import AgentvError

        try:
            code = func(*args, **kwargs)
        except AgentvError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            if exc.hint:
                print(f"hint: {exc.hint}", file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except typer.Exit:
            raise
        except Exception:  # noqa: BLE001 - anything else is a bug: show it
            traceback.print_exc()
            print("agentv: internal error (this is a bug; please report it with the traceback above)", file=sys.stderr)
            raise typer.Exit(EXIT_INTERNAL) from None
        raise typer.Exit(code or 0)

    return wrapper  # type: ignore[return-value]


def _version(value: bool) -> None:
    if value:
        print(f"agentv {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """Eval runner for structured outputs."""


from agentv_py.cli import eval_cmd as _eval_cmd  # noqa: E402,F401  (registers the commands)
from agentv_py.cli import metrics_cmd as _metrics_cmd  # noqa: E402,F401
from agentv_py.cli import validate_cmd as _validate_cmd  # noqa: E402,F401


def main() -> None:
    app(prog_name="agentv")


__all__ = ["app", "main"]
