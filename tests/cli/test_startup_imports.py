"""Start-up discipline (issue 28): a command imports only what its run uses. A dataset without
URLs never loads the network code (http.client, urllib.request, ssl: `agentv_py.process.fetch`),
only `agentv cache` loads sqlite3 for the command line, a command's run registers that command
alone (`agentv_py.cli.main`), an evaluator's code is imported when a dataset names it, `validate`
loads no fuzzy matcher, result models nor renderer, the command line's values are coerced
without Typer's pydantic adapters (`typer._adapters`, `cli.params`), and of the evaluator and
target configs only the types a dataset names are built (`models.tagged`). Checked by module
name and by which models are built, in a fresh interpreter, never by timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT, Workspace

NETWORK = ["agentv_py.process.fetch", "http.client", "ssl", "urllib.request"]
UNUSED = [*NETWORK, "typer._adapters"]  # what a one-case eval or validate of a local dataset never needs
# ... nor the other commands' modules, the evaluators its dataset does not name, logging (a run's
# notices), the reuse planner (--resume and the like), nor glob (a pattern among the paths)
NOT_RUN = [
    *UNUSED,
    "agentv_py.cli.metrics_cmd",
    "agentv_py.cli.rescore_cmd",
    "agentv_py.evaluators.code_judge",
    "agentv_py.evaluators.llm_judge",
    "agentv_py.evaluators.tool_trajectory",
    "agentv_py.reuse_plan",
    "glob",
    "logging",
]
# `validate` scores nothing and writes no row: no fuzzy matcher, no result models, no renderer
NOT_VALIDATED = [
    *NOT_RUN,
    "agentv_py.cli.eval_cmd",
    "agentv_py.evaluators",
    "agentv_py.models.results",
    "agentv_py.report.render",
    "agentv_py.report.summary",
    "agentv_py.runner.outcome",
    "rapidfuzz",
]

# The command runs in a fresh interpreter, as `agentv` does; then the modules it loaded are listed.
PROBE = """
import json, sys
args, modules = json.loads(sys.argv[1]), json.loads(sys.argv[2])
from agentv_py.cli import main
sys.argv = ["agentv", *args]
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code
sys.stderr.write("LOADED " + json.dumps(sorted(m for m in modules if m in sys.modules)) + "\\n")
sys.stderr.write(f"EXIT {code}\\n")
"""


def loaded(args: list[str], modules: list[str], cwd: object) -> tuple[list[str], str]:
    """(the `modules` that `agentv ARGS` imported, its exit code) from a fresh interpreter."""
    argv = [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(modules)]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, check=True)
    lines = result.stderr.splitlines()
    found = next(line for line in lines if line.startswith("LOADED "))
    return json.loads(found.removeprefix("LOADED ")), lines[-1]


@pytest.fixture
def one_case(ws: Workspace) -> Workspace:
    ws.cases_dataset([("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    ws.cli_target("cat {FILES}")
    return ws


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        pytest.param(["validate", "dataset.yaml"], NOT_VALIDATED, id="validate-imports-no-network-nor-scoring-code"),
        pytest.param(
            ["eval", "dataset.yaml", "--out", "out.jsonl", "--workers", "2", "--threshold", "0.5"],
            NOT_RUN,
            id="eval-without-urls-imports-no-network-code-nor-unused-evaluators",
        ),
        pytest.param(["--help"], [*NETWORK, "pydantic", "sqlite3", "yaml"], id="help-imports-no-models-nor-sqlite"),
    ],
)
def test_a_command_imports_only_what_its_run_uses(one_case: Workspace, args: list[str], absent: list[str]) -> None:
    found, code = loaded(args, absent, one_case.root)
    assert (found, code) == ([], "EXIT 0")


def test_a_dataset_with_a_url_file_validates_without_the_network_code(ws: Workspace) -> None:
    ws.dataset(
        """
        evalcases:
          - id: c1
            input_messages: [{role: user, content: [{type: file, value: "https://example.com/a.json"}]}]
            expected_messages: [{role: assistant, content: {a: 1}}]
        """
    )
    assert loaded(["validate", "dataset.yaml"], NETWORK, ws.root) == ([], "EXIT 0")


def test_the_network_code_is_one_module_that_the_url_checks_do_not_import() -> None:
    code = "import sys, agentv_py.process.urls; print('agentv_py.process.fetch' in sys.modules, 'ssl' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert result.stdout == "False False\n"


# Which evaluator and target config models are built once the command ran (`__pydantic_complete__`).
BUILT = """
import json, sys
from agentv_py.cli import main
sys.argv = ["agentv", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
from agentv_py.models.evaluators import EVALUATOR_CONFIG_TYPES
from agentv_py.models.targets import RunnableTarget
from typing import get_args
models = [*EVALUATOR_CONFIG_TYPES, *get_args(RunnableTarget)]
print(json.dumps(sorted(model.__name__ for model in models if model.__pydantic_complete__)))
"""


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["validate", "dataset.yaml"], id="validate"),
        pytest.param(["eval", "dataset.yaml", "--out", "out.jsonl"], id="eval"),
    ],
)
def test_only_the_evaluator_and_target_types_a_dataset_names_are_built(one_case: Workspace, args: list[str]) -> None:
    argv = [sys.executable, "-c", BUILT, json.dumps(args)]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=one_case.root, check=True)
    # field_accuracy and the cli target are the dataset's; the mock is the dry run's target (built at
    # import), llm_judge the default judge's evaluator config (built when loading)
    assert json.loads(result.stdout.splitlines()[-1]) == [
        "CliTarget",
        "FieldAccuracyConfig",
        "LlmJudgeConfig",
        "MockTarget",
    ]
