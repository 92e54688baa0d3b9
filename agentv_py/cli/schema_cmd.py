"""`agentv schema dataset|targets`: the JSON Schema of a file format, for editors."""

from __future__ import annotations

import json
import sys

import typer

from agentv_py.cli.base import EXIT_OK, SchemaCommand, app, boundary

# The file formats, in the order they are listed (`agentv_py.schema.SCHEMA_KINDS`, which a test
# checks, is not imported here: it imports pydantic, and `agentv --help` stays fast).
KINDS = ("dataset", "targets")
CHOOSE = f"Choose one of: {', '.join(KINDS)}."


def _known_kind(ctx: typer.Context, value: str | None) -> str:
    """A usage error (exit 2, click's usage lines first) unless FORMAT is one of KINDS."""
    if value is None:
        ctx.fail(f"Missing argument 'FORMAT'. {CHOOSE}")
    if value not in KINDS:
        ctx.fail(f"Unknown FORMAT {value!r}. {CHOOSE}")  # repr: control characters escaped
    return value


@app.command(cls=SchemaCommand, short_help="Print the JSON Schema of datasets or targets files.")
@boundary
def schema(
    kind: str | None = typer.Argument(
        None,
        metavar="FORMAT",
        help="dataset or targets.",
        show_default=False,
        callback=_known_kind,
    ),
) -> int:
    """Print the JSON Schema of a dataset or targets file (for an editor's YAML language server)."""
    from agentv_py.schema import json_schema

    assert kind is not None  # the callback refused None
    sys.stdout.write(json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK
