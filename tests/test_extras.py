"""A feature whose extra is not installed is refused before any case runs: exit 2, the feature,
what uses it, and the `pip install` command; the same from `validate`. Each extra is hidden in a
real agentv process (an import hook that answers "no module named ..." for its packages, as an
environment without them does), whole or in part, or through a dependency of one of them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Runs agentv with the modules named in argv[1] (comma-separated, with their submodules) missing.
HIDER = """
import sys
hidden = tuple(sys.argv[1].split(","))

class Hide:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if any(name == h or name.startswith(h + ".") for h in hidden):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide)
sys.argv = ["agentv", *sys.argv[2:]]
from agentv_py.cli import main
main()
"""

GEOMETRY_DATASET = """\
execution:
  target: t
  evaluators:
    - {name: fields, type: field_accuracy, fields: [{path: a}]}
    - {name: boxes, type: iou_score, path: boxes}
evalcases:
  - id: c1
    input_messages: [{role: user, content: hello}]
    expected_messages: [{role: assistant, content: {a: 1, boxes: [[0, 0, 1, 1]]}}]
  - id: c2
    input_messages: [{role: user, content: hello}]
    expected_messages: [{role: assistant, content: {a: 1, point: [1, 2]}}]
    evaluators:
      - {name: point, type: coordinate_distance, path: point, threshold: 2}
"""

MODEL_DATASET = """\
execution:
  target: {target}
evalcases:
  - id: c1
    input_messages: [{{role: user, content: hello}}]
    expected_messages: [{{role: assistant, content: {{a: 1}}}}]
    evaluators:
      - {{name: fields, type: field_accuracy, fields: [{{path: a}}]}}
      - {{name: quality, type: llm_judge, target: judge, prompt: Is it right?}}
"""

TARGETS = """\
targets:
  - {name: t, provider: cli, command_template: "echo {{\\"a\\": 1}}"}
  - {name: gpt, provider: openai, model: gpt-x, api_key: sk-test, base_url: "http://127.0.0.1:9"}
  - {name: azure, provider: azure, endpoint: "http://127.0.0.1:9", deployment: d, api_key: k}
  - {name: claude, provider: anthropic, model: claude-x, api_key: k}
  - {name: gem, provider: gemini, model: gemini-x, api_key: k}
  - {name: judge, provider: anthropic, model: claude-x, api_key: k}
"""


def agentv_without(cwd: Path, hidden: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    env.pop("RAY_ADDRESS", None)
    return subprocess.run(
        [sys.executable, "-c", HIDER, hidden, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def install(extra: str) -> str:
    return f"pip install 'agentv-py[{extra}]'"


def refused(result: subprocess.CompletedProcess[str], lines: list[str]) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == lines
    assert "Traceback" not in result.stderr + result.stdout


@pytest.fixture
def project(ws):
    ws.file(".agentv/targets.yaml", TARGETS)
    return ws


@pytest.mark.parametrize(
    ("hidden", "why"),
    [
        ("numpy,scipy,shapely", "numpy, scipy, shapely are not installed"),
        ("shapely", "shapely is not installed"),  # a partial extra: one package of it
        ("scipy", "scipy is not installed"),
    ],
    ids=["geometry", "no-shapely", "no-scipy"],
)
def test_geometry_evaluators_without_the_geometry_extra(project, hidden, why):
    project.dataset(GEOMETRY_DATASET)
    problem = (
        f"dataset.yaml:5: execution.evaluators[1]: iou_score 'boxes' (and 1 more evaluator) needs the "
        f"'geometry' extra ({why}): {install('geometry')}"
    )
    refused(agentv_without(project.root, hidden, "eval", "dataset.yaml", "--out", "o.jsonl"),
            ["error: 1 problem found:", f"  {problem}"])  # fmt: skip
    assert not (project.root / "o.jsonl").exists()  # nothing ran: no row, no results file
    refused(agentv_without(project.root, hidden, "validate", "dataset.yaml"), [problem, "1 problem found"])


@pytest.mark.parametrize(
    ("target", "provider", "extra", "hidden", "why"),
    [
        ("gpt", "openai", "openai", "openai", "openai is not installed"),
        ("azure", "azure", "openai", "openai", "openai is not installed"),
        ("claude", "anthropic", "anthropic", "anthropic", "anthropic is not installed"),
        ("gem", "gemini", "gemini", "google.genai", "google-genai is not installed"),
        # installed, but a dependency of the SDK is missing
        ("gpt", "openai", "openai", "jiter", "openai cannot be imported: no module named 'jiter'"),
    ],
    ids=["openai", "azure", "anthropic", "gemini", "openai-dependency"],
)
def test_a_model_target_without_its_provider_extra(project, target, provider, extra, hidden, why):
    project.dataset(MODEL_DATASET.format(target=target).replace(", target: judge", ""))
    message = f"target '{target}': provider '{provider}' needs the '{extra}' extra ({why}): {install(extra)}"
    refused(agentv_without(project.root, hidden, "eval", "dataset.yaml", "--out", "o.jsonl"), [f"error: {message}"])
    result = agentv_without(project.root, hidden, "validate", "dataset.yaml")
    assert result.returncode == 2
    assert f"dataset.yaml: {message}" in result.stderr.splitlines()


def test_an_llm_judge_whose_target_needs_a_missing_extra(project):
    project.dataset(MODEL_DATASET.format(target="t"))
    problem = (
        "dataset.yaml:9: evalcases[0].evaluators[1].target: llm_judge 'quality': judge target 'judge' (from target): "
        f"provider 'anthropic' needs the 'anthropic' extra (anthropic is not installed): {install('anthropic')}"
    )
    refused(agentv_without(project.root, "anthropic", "eval", "dataset.yaml", "--out", "o.jsonl"),
            ["error: 1 problem found:", f"  {problem}"])  # fmt: skip
    refused(agentv_without(project.root, "anthropic", "validate", "dataset.yaml"), [problem, "1 problem found"])


def test_the_ray_executor_without_the_ray_extra(project):
    project.dataset(MODEL_DATASET.format(target="t").split("      - {name: quality")[0])
    result = agentv_without(project.root, "ray", "eval", "dataset.yaml", "--executor", "ray", "--out", "o.jsonl")
    refused(result, [f"error: --executor ray needs the 'ray' extra (ray is not installed): {install('ray')}"])


def test_the_base_features_run_with_every_extra_missing(project):
    """cli target, field_accuracy (match: items, optimal), metrics, compare, the HTML report."""
    project.dataset(
        "execution:\n  target: t\n  evaluators:\n"
        "    - {type: field_accuracy, fields: [{path: a}, {path: items, match: items, algorithm: optimal, "
        "key: [d], fields: [{path: d}]}]}\n"
        "evalcases:\n  - id: c1\n    input_messages: [{role: user, content: hi}]\n"
        "    expected_messages: [{role: assistant, content: {a: 1, items: [{d: x}, {d: y}]}}]\n"
    )
    project.file(".agentv/targets.yaml", TARGETS.replace('echo {{\\"a\\": 1}}', "cat answer.json"))
    project.file("answer.json", '{"a": 1, "items": [{"d": "y"}, {"d": "x"}]}')
    hidden = "scipy,shapely,openai,anthropic,google.genai,ray"  # numpy is a base dependency
    for args in (
        ["eval", "dataset.yaml", "--out", "o.jsonl", "--html", "o.html"],
        ["metrics", "o.jsonl"],
        ["eval", "dataset.yaml", "--out", "p.jsonl"],
        ["compare", "o.jsonl", "p.jsonl"],
    ):
        result = agentv_without(project.root, hidden, *args)
        assert result.returncode == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert '"score":1.0' in (project.root / "o.jsonl").read_text().replace(" ", "")


def test_a_case_of_its_own_is_named_and_rescore_refuses_without_a_stray_hint(project):
    project.dataset(
        "execution:\n  target: t\nevalcases:\n  - id: boxes-case\n    input_messages: [{role: user, content: hi}]\n"
        "    expected_messages: [{role: assistant, content: {boxes: [[0, 0, 1, 1]]}}]\n"
        "    evaluators:\n      - {name: boxes, type: iou_score, path: boxes}\n"
    )
    problem = (
        "dataset.yaml:8: evalcases[0].evaluators[0]: iou_score 'boxes' (case 'boxes-case') needs the 'geometry' "
        f"extra (numpy, scipy, shapely are not installed): {install('geometry')}"
    )
    refused(
        agentv_without(project.root, "numpy,scipy,shapely", "validate", "dataset.yaml"), [problem, "1 problem found"]
    )
    ran = agentv_without(project.root, "ray", "eval", "dataset.yaml", "--out", "o.jsonl")  # geometry installed
    assert ran.returncode == 1, ran.stderr  # the cli target answers {"a": 1}: no boxes
    rescored = agentv_without(project.root, "numpy,scipy,shapely", "rescore", "o.jsonl", "--out", "r.jsonl")
    refused(rescored, ["error: 1 problem found:", f"  {problem}"])  # no "pass --judge-target" hint: no judge here
