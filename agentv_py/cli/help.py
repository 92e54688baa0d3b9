"""Plain, click-style help for `agentv`: no type tags, argument names as in the usage line, and
each command's own exit codes as a table that wraps with a hanging indent at any terminal width.

These are subclasses of Typer's public command and group classes (`typer.core`), selected with
`cls=`; the help is written through click's `HelpFormatter` API, nothing of Typer is patched. Their
parameters coerce plain values without pydantic (`cli.params`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from typer.core import TyperCommand, TyperGroup

ExitCodes = Sequence[tuple[int, str]]


def _argument_name(param: Any) -> str:
    """`DATASET`, `PATH...`: the metavar (else the upper-cased name), as click prints arguments."""
    name = param.metavar or param.name.upper()
    return name if param.nargs == 1 else f"{name}..."


def write_exit_codes(formatter: Any, heading: str, codes: ExitCodes, note: str | None = None) -> None:
    with formatter.section(heading):
        formatter.write_dl([(str(code), meaning) for code, meaning in codes])
        if note:
            formatter.write_paragraph()
            formatter.write_text(note)


_ONLY_HELP = frozenset({"-h", "--help", "-V", "--version"})


def _plain_coercion(command: Any, ctx: Any, args: Sequence[str]) -> None:
    """Before a command or group parses `args`: its plain parameters coerced without pydantic
    (`cli.params`). Not for a command line that only asks for help or the version: nothing is
    coerced then, and `agentv --help` does not import the module."""
    if not set(args) - _ONLY_HELP:
        return
    try:
        from agentv_py.cli.params import fast_coercion
    except ImportError:  # a Typer without its runtime coercion layer (`typer._coercion`): its own
        return
    fast_coercion([*command.params, command.get_help_option(ctx)])


class HelpCommand(TyperCommand):
    """A command whose help lists its arguments without type tags, then its own exit codes."""

    exit_codes: ExitCodes = ()

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_coercion(self, ctx, args)
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = _argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append((_argument_name(param), record[1]))
            else:
                options.append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        super().format_epilog(ctx, formatter)
        if self.exit_codes:
            write_exit_codes(formatter, "Exit codes", self.exit_codes)


def with_exit_codes(name: str, codes: ExitCodes) -> type[HelpCommand]:
    """A `HelpCommand` class for `app.command(cls=...)` that lists these exit codes."""
    return type(name, (HelpCommand,), {"exit_codes": tuple(codes)})


class HelpGroup(TyperGroup):
    """The top-level `agentv` group: an exit-code table (with a note) after the commands."""

    exit_codes_heading: str = "Exit codes"
    exit_codes: ExitCodes = ()
    exit_codes_note: str | None = None

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _plain_coercion(self, ctx, args)
        return super().parse_args(ctx, args)

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        super().format_epilog(ctx, formatter)
        if self.exit_codes:
            write_exit_codes(formatter, self.exit_codes_heading, self.exit_codes, self.exit_codes_note)
