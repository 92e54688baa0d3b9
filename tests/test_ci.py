"""`.ci/run` runs exactly the README's test command, and that command runs the checks first."""

from __future__ import annotations

from tests.conftest import REPO_ROOT


def test_ci_runs_the_readme_command_with_static_checks_before_pytest():
    readme = (REPO_ROOT / "README.md").read_text()
    ci = (REPO_ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in readme
    checks = ["ruff check .", "ruff format --check .", "mypy", "python -m pytest"]
    positions = [ci.index(check) for check in checks]
    assert positions == sorted(positions)
