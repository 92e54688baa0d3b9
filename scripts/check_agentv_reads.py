"""Does AgentV itself read the run folders `agentv eval --agentv-run DIR` writes?

Runs this tool on the example dataset twice (its mock extractor, then `--dry-run`: every answer
the ground truth) and on a dataset of hostile case ids, each with `--agentv-run`, then runs the
real AgentV CLI (npm `agentv`, v4.42.4) on the folders: `results validate`, `results summary`,
`results show`, `results failures`, `results report`, `compare` and `trend`. Prints each command,
its exit code and what it printed, and ends with one line per command: `ok` or `FAILED`.

    npm install --prefix /tmp/npm-agentv agentv@4.42.4
    python scripts/check_agentv_reads.py /tmp/npm-agentv/node_modules/.bin/agentv
    AGENTV_NPM=/tmp/npm-agentv/node_modules/.bin/agentv python scripts/check_agentv_reads.py

Everything is written in a temporary folder (kept with --keep); exit 0 when every AgentV
command succeeded and no file was written outside the run folders, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "evals" / "invoice-extraction" / "dataset.yaml"
SHOWN = 600  # characters of each command's output printed

# Case ids that must not take a file out of the run folder, nor break AgentV's reading of it.
HOSTILE = textwrap.dedent(
    """\
    dataset: hostile
    execution:
      target: mock
      evaluators:
        - {name: fields, type: field_accuracy, fields: [{path: a}]}
    evalcases:
      - id: ../escape
        input_messages: [{role: user, content: one}]
        expected_messages: [{role: assistant, content: {a: 1}}]
      - id: "a/b\\\\c:d*e?f"
        input_messages: [{role: user, content: two}]
        expected_messages: [{role: assistant, content: {a: 2}}]
      - id: ".."
        input_messages: [{role: user, content: three}]
        expected_messages: [{role: assistant, content: {a: 3}}]
      - id: "line\\nbreak <b>[bold]</b>"
        input_messages: [{role: user, content: four}]
        expected_messages: [{role: assistant, content: {a: 4}}]
      - id: "%s"
        input_messages: [{role: user, content: five}]
        expected_messages: [{role: assistant, content: {a: 5}}]
    """
) % ("x" * 300)
HOSTILE_TARGETS = "targets:\n  - name: mock\n    provider: mock\n"


def run(argv: list[str], cwd: Path) -> tuple[int, str]:
    proc = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"}
    )
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def show(title: str, code: int, output: str) -> None:
    cut = output if len(output) <= SHOWN else output[:SHOWN] + f"\n... ({len(output) - SHOWN} more characters)"
    print(f"$ {title}\nexit {code}\n{textwrap.indent(cut, '  ')}\n")


def ours(work: Path, *args: str) -> None:
    """A run of this tool (its exit code is the gate's: 0 or 1 are both runs that wrote)."""
    argv = [sys.executable, "-m", "agentv_py", *args]
    code, output = run(argv, work)
    show(("agentv-py " + " ".join(args)).replace(str(work), "<tmp>"), code, output.splitlines()[-1] if output else "")
    if code not in (0, 1):
        sys.exit(f"agentv-py failed (exit {code}):\n{output}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agentv", nargs="?", default=os.environ.get("AGENTV_NPM"), help="the npm agentv binary")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    options = parser.parse_args()
    if not options.agentv:
        parser.error("give the path of the npm agentv binary (or set AGENTV_NPM)")
    agentv = str(Path(options.agentv).resolve())
    code, version = run([agentv, "--version"], REPO)
    print(f"AgentV CLI: {agentv} (version {version})\n")

    scratch = tempfile.mkdtemp(prefix="check-agentv-reads-")
    work = Path(scratch)
    runs = work / "runs" / "agentv-py"
    base, new, hostile = (runs / f"2026-11-27T12-0{i}-00-000Z" for i in range(3))
    (work / "hostile").mkdir()
    (work / "hostile" / "dataset.yaml").write_text(HOSTILE)
    (work / "hostile" / "targets.yaml").write_text(HOSTILE_TARGETS)

    ours(work, "eval", str(EXAMPLE), "--out", "base.jsonl", "--agentv-run", str(base))
    ours(work, "eval", str(EXAMPLE), "--dry-run", "--out", "new.jsonl", "--agentv-run", str(new))
    ours(work, "eval", "hostile/dataset.yaml", "--dry-run", "--out", "hostile.jsonl", "--agentv-run", str(hostile))

    checks = [
        ("results validate BASE", ["results", "validate", str(base)]),
        ("results validate NEW", ["results", "validate", str(new)]),
        ("results validate HOSTILE", ["results", "validate", str(hostile)]),
        ("results summary BASE", ["results", "summary", str(base)]),
        ("results show BASE --test-id invoice-004", ["results", "show", str(base), "--test-id", "invoice-004"]),
        ("results failures BASE", ["results", "failures", str(base)]),
        ("results summary HOSTILE", ["results", "summary", str(hostile)]),
        ("results show HOSTILE --test-id ../escape", ["results", "show", str(hostile), "--test-id", "../escape"]),
        ("results report BASE --out base.html", ["results", "report", str(base), "--out", str(work / "base.html")]),
        ("compare BASE NEW", ["compare", str(base), str(new)]),
        ("compare BASE/index.jsonl NEW/index.jsonl", ["compare", str(base / "index.jsonl"), str(new / "index.jsonl")]),
        ("trend BASE NEW --allow-missing-tests", ["trend", str(base), str(new), "--allow-missing-tests"]),
    ]
    outcomes = []
    for title, argv in checks:
        code, output = run([agentv, *argv], work)
        show(f"agentv {title}", code, output.replace(str(work), "<tmp>"))
        outcomes.append((title, code == 0))

    allowed = {work / name for name in ("base.jsonl", "new.jsonl", "hostile.jsonl", "base.html", "hostile", "runs")}
    allowed |= {work / f"{name}.meta.json" for name in ("base.jsonl", "new.jsonl", "hostile.jsonl")}
    strays = sorted(str(path.relative_to(work)) for path in work.iterdir() if path not in allowed)
    strays += [str(p.relative_to(work)) for p in (work / "runs").iterdir() if p != runs]
    outcomes.append(("no file outside the run folders" + (f" ({', '.join(strays)})" if strays else ""), not strays))

    print("Outcome:")
    for title, passed in outcomes:
        print(f"  {'ok    ' if passed else 'FAILED'}  {title}")
    if options.keep:
        print(f"\nkept: {work}")
    else:
        import shutil

        shutil.rmtree(work)
    return 0 if all(passed for _, passed in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
