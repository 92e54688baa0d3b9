"""Every command README.md and docs/*.md show (tests/docs/snippets.py says where they are found)
is run here and prints what the docs say it prints (tests/docs/output.py says how that is
compared), or it is on ALLOWED with the reason it cannot run here, or it is a reference to a
command (a synopsis such as `agentv metrics RESULTS.jsonl [--taxonomy]`, or a command named
with its options only, such as `agentv eval --cache`). A command that is none of these fails
`test_every_command_is_run_or_allowed`, so new docs cannot drift; every command, allowed ones
included, names commands and options that exist.

A snippet's commands run in order in one workspace (tests/docs/workspace.py): a copy of the
repository's examples plus the files the docs name as the reader's own. RUN gives, per command,
its exit code and what must run before it; a `$ echo $?` line in the docs shows the exit code
of the command before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs.cli_words import agentv_problems, agentv_words, is_reference, script_problems
from tests.docs.output import lines_of, mismatch, normalise, progress_in_case_order
from tests.docs.snippets import Command, Snippet, all_snippets, split_words
from tests.docs.workspace import Step, Workspace


def gated(root: Path) -> None:
    """README's gates example: the example dataset with two gates."""
    path = root / "evals" / "invoice-extraction" / "dataset.yaml"
    path.write_text(path.read_text() + "gates:\n  min_mean_score: 0.85\n  fields:\n    invoice_number: {recall: 0.8}\n")


def worked_example(root: Path) -> None:
    """docs/metrics.md's worked example: five documents' per-field counts as run.jsonl."""
    from tests.cli.test_metrics import worked_example_file

    worked_example_file(root / "run.jsonl")


def project_agentv_dir(root: Path) -> None:
    """The reader's project has a `.agentv/` folder (its targets file)."""
    (root / ".agentv").mkdir(exist_ok=True)


def words(text: str) -> tuple[str, ...]:
    return tuple(split_words(text)[0])


# Setups are the docs' own commands where they can be, so that a snippet continues from the state
# another one left (tests/docs/workspace.py keeps it): explain.md reads the README's run of the
# example, and shard 2 comes first because sharding.md's first block runs it alone.
EXAMPLE_RUN = words("agentv eval evals/invoice-extraction/dataset.yaml --out run.jsonl --html run.html")
INVOICES_RUN = words("agentv eval evals/invoices.yaml --out run.jsonl")
CONFUSION_RUN = words("agentv eval evals/invoice-extraction/confusion-metrics.yaml --out run.jsonl")
SHARDS = tuple(words(f"agentv eval evals/invoices.yaml --shard {k}/4 --out shard-{k}.jsonl") for k in (2, 1, 3, 4))


@dataclass(frozen=True)
class Run:
    """How a documented command runs: the exit code it must give, what runs first in the same
    workspace (only for the first command of a snippet), the directory it runs in, the terminal
    width, and text the docs' prose says it prints (for commands shown without their output)."""

    exit: int = 0
    setup: tuple[Step, ...] = ()
    cwd: str = "."
    columns: int = 100
    says: str | None = None


FAILS_ON_PURPOSE = 1  # the example's invoice-004 and invoice-005 do not pass: the exit code is 1
WIDE = 120  # docs/metrics.md's taxonomy table; the snippets that share the example's run share its width

RUN: dict[tuple[str, str], Run] = {
    ("README.md", ".venv/bin/agentv eval evals/invoice-extraction/dataset.yaml --threshold 0.8"): Run(),
    ("README.md", "agentv eval evals/invoice-extraction/dataset.yaml"): Run(FAILS_ON_PURPOSE),
    ("README.md", "agentv eval evals/invoice-extraction/dataset.yaml --target perfect"): Run(says="7 passed"),
    ("README.md", ".venv/bin/agentv eval evals/vision/validators.yaml"): Run(1),
    ("README.md", "agentv validate evals/broken.yaml"): Run(2),
    ("README.md", "agentv eval evals/layout-detection/dataset.yaml"): Run(1),
    (
        "README.md",
        "agentv eval evals/invoices.yaml --out run.jsonl --junit reports/agentv.xml --junit-per-field",
    ): Run(FAILS_ON_PURPOSE),
    ("README.md", "agentv eval evals/invoices.yaml --out run.jsonl"): Run(FAILS_ON_PURPOSE),
    ("README.md", "agentv rescore run.jsonl --dataset evals/invoices.yaml --out rescored.jsonl"): Run(FAILS_ON_PURPOSE),
    ("README.md", "agentv schema dataset"): Run(),
    ("README.md", "agentv schema targets"): Run(),
    ("docs/agentv-compat.md", "agentv schema dataset"): Run(says='"AgentV442Dataset"'),
    ("README.md", "agentv schema dataset > dataset.schema.json"): Run(setup=(project_agentv_dir,)),
    ("README.md", "agentv schema targets > .agentv/targets.schema.json"): Run(),
    ("README.md", "agentv eval evals/invoice-extraction/confusion-metrics.yaml --out run.jsonl"): Run(),
    ("README.md", "agentv metrics run.jsonl"): Run(),
    ("README.md", "agentv eval dataset.yaml --baseline main.jsonl --max-drop 0.02"): Run(
        setup=(gated, words("agentv eval dataset.yaml --out main.jsonl")), cwd="evals/invoice-extraction"
    ),
    ("README.md", " ".join(EXAMPLE_RUN)): Run(FAILS_ON_PURPOSE, columns=WIDE),
    ("README.md", "agentv report run.jsonl -o run.html"): Run(),
    (
        "docs/statistics.md",
        "agentv eval evals/invoice-extraction/dataset.yaml --repeat 3 --threshold 0.8 --out run3.jsonl",
    ): Run(columns=WIDE),
    ("README.md", "agentv metrics run.jsonl --taxonomy"): Run(),
    ("docs/agentv-compat.md", "agentv eval a.yaml b.yaml"): Run(2, says="Datasets: 2 of 2 run"),
    ("docs/explain.md", "agentv explain run.jsonl invoice-005 line_items[1].amount"): Run(
        setup=(EXAMPLE_RUN,), columns=WIDE
    ),
    ("docs/incremental.md", "agentv eval evals/invoices.yaml --out run.jsonl"): Run(FAILS_ON_PURPOSE),
    ("docs/incremental.md", "agentv rescore run.jsonl --dataset evals/invoices.yaml --out rescored.jsonl"): Run(
        FAILS_ON_PURPOSE
    ),
    ("docs/llm-judges.md", "agentv eval evals/vision/validators.yaml"): Run(1),
    ("docs/metrics.md", "agentv metrics run.jsonl --no-intervals"): Run(setup=(worked_example,)),
    ("docs/statistics.md", "agentv metrics run.jsonl --confidence 0.9"): Run(setup=(CONFUSION_RUN,)),
    (
        "docs/statistics.md",
        "agentv plan-size run.jsonl --detect 0.05 --field invoice_number --field supplier.name",
    ): Run(1, setup=(CONFUSION_RUN,)),
    ("docs/metrics.md", "agentv metrics run.jsonl --taxonomy"): Run(setup=(EXAMPLE_RUN,), columns=WIDE),
    ("docs/report.md", "agentv report run.jsonl"): Run(setup=(INVOICES_RUN,)),
    ("docs/report.md", "agentv report run.jsonl -o reports/run.html --dataset evals/invoices.yaml"): Run(),
    ("docs/report.md", "agentv eval evals/invoices.yaml --out run.jsonl --html reports/run.html"): Run(
        FAILS_ON_PURPOSE
    ),
    (
        "docs/report.md",
        "agentv rescore run.jsonl --dataset evals/invoices.yaml --out rescored.jsonl --html reports/rescored.html",
    ): Run(FAILS_ON_PURPOSE),
    ("docs/sharding.md", "agentv eval evals/invoices.yaml --shard 2/4 --out shard-2.jsonl"): Run(FAILS_ON_PURPOSE),
    ("docs/sharding.md", "agentv eval evals/invoices.yaml --shard 5/4"): Run(2),
    ("docs/sharding.md", "agentv merge shard-1.jsonl shard-2.jsonl shard-3.jsonl shard-4.jsonl -o all.jsonl"): Run(
        FAILS_ON_PURPOSE, setup=SHARDS
    ),
    ("docs/sharding.md", "agentv merge shard-*.jsonl -o all.jsonl --dataset evals/invoices.yaml"): Run(
        FAILS_ON_PURPOSE, setup=SHARDS
    ),
    ("docs/sharding.md", "agentv report all.jsonl -o report.html"): Run(),
}

ALLOWED: list[tuple[str, str]] = [
    (r"^python3 -m venv ", "creates the virtual environment the tests themselves run in"),
    (r"^(\.venv/bin/)?pip install ", "installs packages: the tests run in an environment installed from the lock"),
    (r"^sh scripts/chromium\.sh$", "installs Chromium with apt-get"),
    (
        r"^\.venv/bin/(ruff|mypy|python -m pytest)",
        "the static checks and the whole suite: `.ci/run` runs them (tests/test_ci.py)",
    ),
    (r"^\.venv/bin/uv pip compile ", "locks the newest releases from the package index (network)"),
    (r"^sh scripts/check_latest\.sh", "the whole suite in a fresh environment of the newest releases (network)"),
    (r"^OPENAI_API_KEY=", "needs an OpenAI API key"),
    (r"--judge-target local_judge$", "needs a model server (Ollama) on localhost:11434"),
    (
        r"\$\{\{ matrix\.shard \}\}",
        "a GitHub Actions step: GitHub fills in the shard; shard 2 runs from the first block",
    ),
    (r"JOB_COMPLETION_INDEX", "a Kubernetes Indexed Job's command: the pod's index comes from Kubernetes"),
    (r"^agentv merge /results/", "merges a Kubernetes volume's files (/results)"),
    (r"SLURM_ARRAY_TASK_ID", "a Slurm array task: Slurm sets the task id"),
    (r"--executor ray", "starts a Ray instance or needs a cluster (tests/runner/test_ray.py runs the executor)"),
    (
        r"^(\.venv/bin/)?python scripts/bench_\w+\.py",
        "a benchmark: minutes of CPU on big workloads; its script and options are checked",
    ),
    (
        r"^agentv eval evals/dataset\.yaml --workers 4$",
        "what scripts/bench_memory.py runs on the peer harness's generated workload (up to 100,000 cases)",
    ),
    (
        r"^python scripts/check_agentv_reads\.py ",
        "runs the npm agentv 4.42.4 package (installed from the npm registry); its script and options are checked",
    ),
    (
        r"^python -m agentv_py\.worker ",
        "the worker a target or judge starts, serving JSON lines (tests/runner/test_workers.py)",
    ),
]

AGENTV_REFERENCE = {
    "agentv init": "AgentV's command (the tool agentv re-implements), not agentv's: neither run nor checked",
}

ECHO_STATUS = ("echo", "$?")


def allowed(command: Command) -> str | None:
    """The reason `command` does not run here, if it is allowed not to."""
    for pattern, reason in ALLOWED:
        if re.search(pattern, command.text):
            return reason
    return AGENTV_REFERENCE.get(command.text)


def first_run(snippet: Snippet) -> Command:
    return next(command for command in snippet.commands if kind(command) == "run")


def kind(command: Command) -> str:
    """run, allowed, reference, echo (`$ echo $?`), or unknown."""
    if (command.doc, command.text) in RUN:
        return "run"
    if command.words == ECHO_STATUS:
        return "echo"
    if allowed(command):
        return "allowed"
    found = agentv_words(command)
    if found is not None and is_reference(found):
        return "reference"
    return "unknown"


SNIPPETS = all_snippets()
COMMANDS = [command for snippet in SNIPPETS for command in snippet.commands]
RUNNABLE = [snippet for snippet in SNIPPETS if any(kind(command) == "run" for command in snippet.commands)]
RUNNABLE_IDS = [f"{snippet.where} {first_run(snippet).text}" for snippet in RUNNABLE]


def test_the_docs_commands_are_found():
    kinds = [kind(command) for command in COMMANDS]
    assert kinds.count("run") >= 30 and kinds.count("allowed") >= 20 and kinds.count("reference") >= 50


def test_every_command_is_run_or_allowed():
    unknown = [f"{c.where}: {c.text}" for c in COMMANDS if kind(c) == "unknown"]
    assert unknown == [], "add each to RUN or ALLOWED (with the reason) in tests/docs/test_commands.py"


def test_every_entry_of_the_tables_is_used():
    found = {(c.doc, c.text) for c in COMMANDS}
    assert [key for key in RUN if key not in found] == []
    later = [(c.doc, c.text) for s in RUNNABLE for c in s.commands if kind(c) == "run" and c is not first_run(s)]
    assert [key for key in later if RUN[key].setup or RUN[key].cwd != "." or RUN[key].columns != 100] == []
    assert [p for p, _ in ALLOWED if not any(re.search(p, c.text) for c in COMMANDS)] == []


def test_every_command_names_commands_and_options_that_exist():
    problems = []
    for command in COMMANDS:
        if command.text in AGENTV_REFERENCE:
            continue
        found = agentv_words(command)
        wrong = agentv_problems(found) if found is not None else script_problems(command)
        problems += [f"{command.where}: {command.text}: {problem}" for problem in wrong or []]
    assert problems == []


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("docs"))


@pytest.mark.parametrize("snippet", RUNNABLE, ids=RUNNABLE_IDS)
def test_the_documented_command_prints_what_the_docs_show(snippet: Snippet, workspace: Workspace):
    commands = [c for c in snippet.commands if kind(c) == "run"]
    first = RUN[(commands[0].doc, commands[0].text)]
    steps: list[Step] = [*first.setup, *(c.words for c in commands)]
    ran = dict(zip(map(id, commands), workspace.run(steps, first.cwd, first.columns)[-len(commands) :], strict=True))
    problems = []
    previous = None
    for command in snippet.commands:
        if kind(command) == "echo" and previous is not None and command.output != (str(previous.exit_code),):
            problems.append(
                f"{command.where}: `echo $?` shows {command.output}, the exit code was {previous.exit_code}"
            )
        if id(command) not in ran:
            continue
        result, expected = ran[id(command)], RUN[(command.doc, command.text)]
        if result.exit_code != expected.exit:
            problems.append(
                f"{command.where}: {command.text}: exit {result.exit_code}, not {expected.exit}:\n{result.output}"
            )
        if command.output is not None:
            printed = progress_in_case_order(normalise(lines_of(result.output), str(workspace.live)))
            diff = mismatch(normalise(list(command.output)), printed)
            if diff is not None:
                problems.append(f"{command.where}: {command.text}: the docs show other output:\n{diff}")
        if expected.says is not None and expected.says not in result.output:
            problems.append(f"{command.where}: {command.text}: does not say {expected.says!r}:\n{result.output}")
        previous = result
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)
