"""What agentv asks of Ray's driver, without Ray: `ray.init`'s options, and where the messages
Ray's driver would print to stdout go (a stand-in for Ray's private module; the real thing is
tests/runner/test_ray.py)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from agentv_py.runner.ray_driver import init_options, ray_messages


@pytest.mark.parametrize(
    "local, verbose, expected",
    [
        (
            True,
            False,
            {
                "log_to_driver": False,
                "configure_logging": True,
                "logging_level": logging.ERROR,
                "include_dashboard": False,
                "num_cpus": 2,
            },
        ),
        (
            True,
            True,
            {
                "log_to_driver": False,
                "configure_logging": True,
                "logging_level": logging.WARNING,
                "include_dashboard": False,
                "num_cpus": 2,
            },
        ),
        (False, False, {"log_to_driver": False, "configure_logging": True, "logging_level": logging.ERROR}),
    ],
    ids=["local-quiet", "local-verbose", "cluster"],
)
def test_init_options(local, verbose, expected):
    assert init_options(local=local, cpus=2, verbose=verbose) == expected


def fake_ray() -> tuple[Any, list[str]]:
    """A stand-in for `ray` whose driver prints what it gets to a list ("stdout")."""
    stdout: list[str] = []

    def print_to_stdstream(data: dict[str, Any], ignore_prefix: bool) -> None:
        stdout.extend(f"({data['pid']}) {line}" for line in data["lines"])

    return SimpleNamespace(
        _private=SimpleNamespace(worker=SimpleNamespace(print_to_stdstream=print_to_stdstream))
    ), stdout


def listener_prints(ray: Any, *lines: str) -> None:
    """What Ray's `listen_error_messages` thread does with a raylet error message."""
    ray._private.worker.print_to_stdstream(
        {"lines": list(lines), "pid": "raylet", "is_err": False}, ignore_prefix=False
    )


@pytest.mark.parametrize(
    "verbose, expected",
    [
        (True, ["Ray (raylet): A worker died or was killed", "Ray (raylet): second line"]),
        (False, []),
    ],
    ids=["verbose-notices", "quiet-dropped"],
)
def test_rays_messages_never_reach_stdout(verbose, expected):
    ray, stdout = fake_ray()
    notices: list[str] = []
    with ray_messages(ray, notices.append if verbose else None):
        listener_prints(ray, "A worker died or was killed\n", "  ", "second line")
    assert notices == expected
    assert stdout == []
    listener_prints(ray, "after the run")  # Ray's own printer is back
    assert stdout == ["(raylet) after the run"]


def test_a_ray_without_the_printer_is_left_alone():
    ray = SimpleNamespace(_private=SimpleNamespace())
    with ray_messages(ray, None):
        pass
    assert vars(ray._private) == {}
