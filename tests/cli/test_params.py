"""`cli.params`: agentv's commands coerce plain values without building a pydantic adapter per
parameter, and every value and every error is the one Typer's own coercion gives. Checked
differentially: the same command, declared once with agentv's command class and once with
Typer's, given the same arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.core import TyperCommand
from typer.testing import CliRunner

from agentv_py.cli.help import HelpCommand
from agentv_py.cli.params import PlainParam


def _app(cls: type[TyperCommand]) -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)

    @app.command(cls=cls)
    def run(
        paths: list[Path] = typer.Argument(...),
        name: str | None = typer.Option(None, "--name"),
        workers: int = typer.Option(4, "--workers", min=1, max=64),
        retries: int | None = typer.Option(None, "--retries"),
        threshold: float | None = typer.Option(None, "--threshold", min=0.0, max=1.0),
        weight: float = typer.Option(1.5, "--weight"),
        out: Path | None = typer.Option(None, "--out"),
        must: Path | None = typer.Option(None, "--must", exists=True, dir_okay=False),
        tags: list[str] = typer.Option([], "--tag"),
        cache: bool | None = typer.Option(None, "--cache/--no-cache"),
        verbose: bool = typer.Option(False, "--verbose"),
    ) -> None:
        values = [paths, name, workers, retries, threshold, weight, out, must, tags, cache, verbose]
        print(repr([(type(value).__name__, value) for value in values]))

    @app.command(cls=cls)
    def other() -> None:  # a second command: the app is a group, as agentv's is
        pass

    return app


AGENTV, TYPER = _app(HelpCommand), _app(TyperCommand)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["a.yaml"], id="defaults"),
        pytest.param(["a.yaml", "b/c.yaml", "--name", "x", "--tag", "t1", "--tag", ""], id="strings-and-lists"),
        pytest.param(["a.yaml", "--workers", "8", "--retries", "0", "--threshold", "0.25"], id="numbers-in-range"),
        pytest.param(["a.yaml", "--workers", "007", "--weight", "3"], id="leading-zeros-and-an-int-for-a-float"),
        pytest.param(["a.yaml", "--workers", "0"], id="int-below-min"),
        pytest.param(["a.yaml", "--workers", "65"], id="int-above-max"),
        pytest.param(["a.yaml", "--workers", "x"], id="int-not-a-number"),
        pytest.param(["a.yaml", "--workers", "-2"], id="negative-int"),
        pytest.param(["a.yaml", "--workers", " 8"], id="int-with-a-space"),
        pytest.param(["a.yaml", "--workers", "1_0"], id="int-with-an-underscore"),
        pytest.param(["a.yaml", "--workers", "4.0"], id="int-written-as-a-float"),
        pytest.param(["a.yaml", "--threshold", "1.5"], id="float-above-max"),
        pytest.param(["a.yaml", "--threshold", "1e-1"], id="float-exponent"),
        pytest.param(["a.yaml", "--threshold", "nan"], id="float-nan"),
        pytest.param(["a.yaml", "--weight", "-inf"], id="float-minus-inf"),
        pytest.param(["a.yaml", "--out", ""], id="empty-path"),
        pytest.param(["a.yaml", "--out", "-"], id="dash-path"),
        pytest.param(["a.yaml", "--must", "no/such/file"], id="missing-path-that-must-exist"),
        pytest.param(["a.yaml", "--must", "."], id="directory-where-a-file-is-wanted"),
        pytest.param(["a.yaml", "--no-cache", "--verbose"], id="flags"),
        pytest.param([], id="missing-argument"),
    ],
)
def test_a_value_coerces_as_typer_coerces_it(args: list[str]) -> None:
    ours, typers = CliRunner().invoke(AGENTV, ["run", *args]), CliRunner().invoke(TYPER, ["run", *args])
    # the last line: the values, or the error (the usage line above it is agentv's own help format)
    assert (ours.exit_code, ours.output.splitlines()[-1]) == (typers.exit_code, typers.output.splitlines()[-1])


def test_plain_parameters_get_the_fast_coercion_when_a_command_runs() -> None:
    command = typer.main.get_command(AGENTV).commands["run"]  # type: ignore[attr-defined]
    ctx = command.make_context("run", ["a.yaml"])
    kinds = {param.name: type(param._runtime_param).__name__ for param in command.get_params(ctx)}
    assert kinds == dict.fromkeys(kinds, PlainParam.__name__)


def test_a_command_line_asking_only_for_help_coerces_nothing() -> None:
    command = typer.main.get_command(AGENTV).commands["run"]  # type: ignore[attr-defined]
    with pytest.raises(typer.Exit):
        command.make_context("run", ["--help"])
    assert all(param._runtime_param is None for param in command.params)
