#!/usr/bin/env python3
"""Start-up benchmark: the CPU a short agentv command costs, against the machine's own floor.

CPU is user + system time of the command and everything it started (a fresh probe process per
run, `getrusage(RUSAGE_CHILDREN)`), medians of `--reps` runs, the commands interleaved so the
machine's drift hits them alike. Python's bytecode is cached as an installed package has it: the
runs use a private `PYTHONPYCACHEPREFIX` (a temporary folder, compiled by a warm-up run; nothing
is written into the source tree). It prints goal, measured and their ratio for:

  1. `agentv eval` of a one-case dataset: the invoice case of `bench_runner.py` (a `sh` target
     that copies its fixture, one `field_accuracy` evaluator of 9 fields; issue 28's goal 0.3 s);
  2. `agentv validate` of the same one-case dataset (goal 0.25 s);
  3. `agentv --help` (issue 16's goal 0.15 s);

and a calibration of the machine, so a slower machine can be told from a regression: the CPU of
`python -c pass` (the interpreter's own start-up), of a fixed pure-Python loop, and of the base
libraries alone (typer, pydantic, rich, pyyaml and orjson imported, one model validated, one
table printed, no agentv code: the floor any one-case eval built on them stands on).

`--compare DIR` times a second tree (a folder holding an `agentv_py` package, e.g. an older
commit's `git archive HEAD agentv_py | tar -x -C DIR`) in the same runs, alternating with this
one, and prints the two side by side. Both run through the venv's `agentv` console script, with
`PYTHONPATH` naming the tree (`--tree DIR` measures another tree than this repository's).

Usage: python scripts/bench_startup.py [--reps 15] [--compare DIR] [--tree DIR] [--instructions]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import calibration_cpu, measured_child  # noqa: E402
from bench_runner import make_workload  # noqa: E402

GOALS = {"eval, one case": 0.30, "validate, one case": 0.25, "--help": 0.15}
# The base libraries the developers' guide names (typer, pydantic v2, rich, pyyaml, orjson), each
# doing the least an eval asks of it: a command line parsed, one model built and validated, a
# table printed, a YAML document and a JSON line read. No agentv code: the floor any one-case eval
# built on them stands on.
BASE_LIBRARIES = """
import io, sys
import typer, pydantic, rich.console, rich.table, yaml, orjson
app = typer.Typer()
@app.command()
def main(path: str) -> None:
    class Case(pydantic.BaseModel):
        id: str
        score: float = 0.0
    case = Case.model_validate(yaml.load("id: c1\\nscore: 1.0\\n", Loader=yaml.CSafeLoader))
    orjson.loads(orjson.dumps(case.model_dump()))
    table = rich.table.Table("case", "score")
    table.add_row(case.id, f"{case.score:.3f}")
    rich.console.Console(file=io.StringIO()).print(table)
app(["x"], standalone_mode=False)
"""


def agentv() -> str:
    console = Path(sys.executable).with_name("agentv")
    if not console.exists():
        raise SystemExit(f"no agentv console script beside {sys.executable}: install the package first")
    return str(console)


def instructions(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Instructions one run of `argv` executes (its own process, not its children), by valgrind."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    if argv[0] == agentv():
        argv = [sys.executable, *argv]  # the console script's interpreter, so valgrind follows it
    out = subprocess.run(
        [*command, *argv], cwd=cwd, env={**env, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=True
    )
    refs = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if refs is None:
        raise SystemExit(f"valgrind printed no instruction count for {argv}: {out.stderr[-500:]}")
    return int(refs.group(1).replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=15, help="measured runs of each command (medians are reported)")
    parser.add_argument("--compare", type=Path, help="a second tree to time alongside (a folder with agentv_py/)")
    parser.add_argument("--tree", type=Path, default=REPO, help="the tree measured (default: this repository)")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count each command's instructions once under valgrind (cachegrind): the same on a busy "
        "machine as on an idle one, so two trees compare even when CPU times are too noisy to",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="agentv-startup-"))
    try:
        root = work / "w"
        dataset = make_workload(root, 1).relative_to(root)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=str(work / "pyc"), AGENTV_CACHE_DIR=str(work / "cache"))
        trees = {"this tree": args.tree.resolve()}
        if args.compare:
            trees = {"compared": args.compare.resolve(), **trees}
        commands = {
            "eval, one case": [agentv(), "eval", str(dataset), "--out", str(work / "out.jsonl")],
            "validate, one case": [agentv(), "validate", str(dataset)],
            "--help": [agentv(), "--help"],
        }
        calibration = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "base libraries alone": [sys.executable, "-c", BASE_LIBRARIES],
        }
        cpu: dict[tuple[str, str], list[float]] = {}
        loops: list[float] = []
        for rep in range(args.reps + 1):  # the first round compiles the bytecode and is not counted
            order = list(trees.items())
            for tree, path in order if rep % 2 else order[::-1]:  # each tree first every other round
                tree_env = {**env, "PYTHONPATH": str(path)}
                for name, argv in commands.items():
                    _, seconds, _, code = measured_child(argv, root, tree_env)
                    if code != 0:
                        raise SystemExit(f"{tree}: `{' '.join(argv)}` exited {code}")
                    if rep:
                        cpu.setdefault((tree, name), []).append(seconds)
            for name, argv in calibration.items():
                _, seconds, _, _ = measured_child(argv, root, env)
                if rep:
                    cpu.setdefault(("", name), []).append(seconds)
            if rep:
                loops.append(calibration_cpu(env))

        print(f"agentv start-up, CPU seconds (user + system, children included), medians of {args.reps} runs")
        print(f"  {'command':<22}{'tree':<12}{'goal':>7}{'measured':>10}{'ratio':>8}  (min - max)")
        for name in commands:
            for tree in trees:
                runs = cpu[(tree, name)]
                median = statistics.median(runs)
                print(
                    f"  {name:<22}{tree:<12}{GOALS[name]:>7.2f}{median:>10.3f}{median / GOALS[name]:>7.2f}x"
                    f"  ({min(runs):.3f} - {max(runs):.3f})"
                )
        print("calibration of this machine:")
        runs = cpu[("", "python -c pass")]
        print(f"  python -c pass        {statistics.median(runs):.3f} s  ({min(runs):.3f} - {max(runs):.3f})")
        runs = cpu[("", "base libraries alone")]
        print(
            f"  base libraries alone  {statistics.median(runs):.3f} s  ({min(runs):.3f} - {max(runs):.3f})"
            "  (typer, pydantic, rich, pyyaml, orjson: imported, one model, one table; no agentv code)"
        )
        print(
            f"  pure-Python loop      {statistics.median(loops):.3f} s  ({min(loops):.3f} - {max(loops):.3f})"
            "  (sum of i * i over 3,000,000, in-process)"
        )
        if args.instructions:
            print("instructions executed (valgrind --tool=cachegrind, one run each, PYTHONHASHSEED=0), millions:")
            for name, argv in calibration.items():
                print(f"  {name:<22}{instructions(argv, root, env) / 1e6:,.0f} (calibration)")
            for name, argv in commands.items():
                counts = {
                    tree: instructions(argv, root, {**env, "PYTHONPATH": str(path)}) for tree, path in trees.items()
                }
                print(f"  {name:<22}" + "  ".join(f"{tree} {count / 1e6:,.0f}" for tree, count in counts.items()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
