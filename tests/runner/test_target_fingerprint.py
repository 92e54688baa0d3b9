"""`target_fingerprint`: a target's parts as the answer cache keys them, each a digest, so that
`--resume` and `agentv merge` can say which part changed without recording any value."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agentv_py.models.model_targets import OpenAITarget
from agentv_py.models.targets import CliTarget, PythonTarget
from agentv_py.runner.target_fingerprint import target_fingerprint

SECRET = "s3cr3t-value-of-the-run"


def _cli(command: str = "python3 ../scripts/extract.py {FILES}", **extra: object) -> CliTarget:
    return CliTarget.model_validate({"name": "t", "provider": "cli", "command_template": command, **extra})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with its dataset in evals/ and the extractor in scripts/."""
    (tmp_path / "evals").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "extract.py").write_text("print('{}')\n")
    return tmp_path


def _fingerprint(project: Path, config=None, environ=None, secrets=()):
    return target_fingerprint(
        config or _cli(), project / "evals", (project, project / "evals"), secrets, environ or {"MODEL": "m"}
    )


def test_scripts_are_keyed_by_their_path_from_the_dataset_and_the_interpreter_is_not_one(project):
    fingerprint = _fingerprint(project, _cli("/usr/bin/env python3 ../scripts/extract.py {FILES}"))
    digest = hashlib.sha256(b"print('{}')\n").hexdigest()
    assert fingerprint.scripts == {"../scripts/extract.py": digest}
    (project / "scripts" / "extract.py").write_text("print('{\"a\": 1}')\n")
    assert _fingerprint(project).scripts["../scripts/extract.py"] != digest


def test_a_python_callables_package_files_are_its_scripts(project):
    package = project / "evals" / "src" / "extractor"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "run.py").write_text("def answer(request): return {}\n")
    config = PythonTarget.model_validate(
        {"name": "p", "provider": "python", "callable": "extractor.run:answer", "path": "src"}
    )
    fingerprint = _fingerprint(project, config)
    assert sorted(fingerprint.scripts) == ["src/extractor/__init__.py", "src/extractor/run.py"]
    assert fingerprint.command and "callable" not in fingerprint.settings


@pytest.mark.parametrize(
    ("before", "after", "same"),
    [
        ({"MODEL": "m"}, {"MODEL": "m2"}, False),
        ({"MODEL": "m"}, {"MODEL": "m", "DEBUG": "1"}, False),
        ({"MODEL": "m", "OPENAI_API_KEY": "k1"}, {"MODEL": "m", "OPENAI_API_KEY": "k2"}, True),
        ({"MODEL": "m", "TERM": "xterm"}, {"MODEL": "m", "TERM": "dumb", "GITHUB_RUN_ID": "7"}, True),
        (
            {"MODEL": "m", "HOSTNAME": "node-1", "SLURM_ARRAY_TASK_ID": "1", "JOB_COMPLETION_INDEX": "0"},
            {"MODEL": "m", "HOSTNAME": "node-2", "SLURM_ARRAY_TASK_ID": "2", "JOB_COMPLETION_INDEX": "1"},
            True,
        ),
        ({"MODEL": "m", "BUILD_ID": "1"}, {"MODEL": "m", "BUILD_ID": "2"}, True),
    ],
    ids=[
        "value-changed",
        "variable-added",
        "secret-rotated",
        "session-bookkeeping",
        "host-and-batch-job-bookkeeping",
        "cache-env-ignore",
    ],
)
def test_the_environment_counts_as_the_cache_counts_it(project, before, after, same):
    config = _cli(cache_env_ignore=["BUILD_*"])
    first = _fingerprint(project, config, before)
    second = _fingerprint(project, config, after)
    assert (first.env == second.env) is same
    assert "TERM" not in first.env and "BUILD_ID" not in first.env


def test_the_targets_own_env_is_in_the_environment_not_in_the_settings(project):
    fingerprint = _fingerprint(project, _cli(env={"MODEL": "large"}))
    assert fingerprint.env["MODEL"] == hashlib.sha256(b"large").hexdigest()  # it overrides the inherited one
    assert "env" not in fingerprint.settings and "command_template" not in fingerprint.settings
    assert {"cwd", "files_format", "provider"} <= set(fingerprint.settings)


def test_no_secret_and_no_digest_of_one_is_recorded(project):
    environ = {"DATABASE_URL": f"postgres://u:{SECRET}@db/x", "RUN_TOKEN": SECRET}
    config = _cli(f"python3 ../scripts/extract.py --key {SECRET} {{FILES}}", env={"PASS": SECRET})
    fingerprint = _fingerprint(project, config, environ, secrets=[SECRET])
    rotated = "an0ther-value-of-the-run"
    again = _fingerprint(
        project,
        _cli(f"python3 ../scripts/extract.py --key {rotated} {{FILES}}", env={"PASS": rotated}),
        {"DATABASE_URL": f"postgres://u:{rotated}@db/x", "RUN_TOKEN": rotated},
        secrets=[rotated],
    )
    assert again == fingerprint  # a secret counts by where it is used, never by its value
    text = fingerprint.model_dump_json()
    assert SECRET not in text and hashlib.sha256(SECRET.encode()).hexdigest() not in text


def test_a_model_target_has_settings_only(project):
    config = OpenAITarget.model_validate({"name": "m", "provider": "openai", "model": "gpt-x", "api_key": SECRET})
    fingerprint = _fingerprint(project, config, secrets=[SECRET])
    assert (fingerprint.command, fingerprint.scripts, fingerprint.env) == ("", {}, {})
    assert "model" in fingerprint.settings and "api_key" not in fingerprint.settings
