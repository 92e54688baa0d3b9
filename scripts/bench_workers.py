#!/usr/bin/env python3
"""Worker benchmark (issue 16): a Python extractor whose import takes 2 s, N cases, 4 workers.

1. The same extractor run three ways by `agentv eval` (wall time of each, same machine, one run):
   a cli target that starts it per case (`python extractor.py FILE`), a `mode: worker` cli target
   (`python extractor.py --worker`, the three-line `agentv_py.worker.serve`), and `provider:
   python` (`callable: extractor:extract`).
2. A trivial Python code judge (the SDK's @judge) over the same cases with a mock target: spawned
   per case vs `persistent: true`.
3. The worker protocol's own cost: M requests through agentv's `Worker.request` to a trivial
   worker, against M bare round trips (a line written, a line read) to a trivial echo process over
   the same kind of pipes; the difference per request is what the protocol adds.

Usage: python scripts/bench_workers.py [--cases 200] [--import-seconds 2] [--requests 2000] [--judge-cases 1000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import print_calibration  # noqa: E402

from agentv_py.process.worker import Worker  # noqa: E402

EXTRACTOR = """
import json, sys, time
time.sleep({seconds})  # loading a model

def extract(request):
    with open(request["files"][0]) as handle:
        return json.load(handle)

if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        from agentv_py.worker import serve
        serve(extract)
    else:
        print(json.dumps(extract({{"files": sys.argv[1:]}})))
"""

ECHO = """
import sys
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""

TRIVIAL_WORKER = """
import json, sys
sys.stdout.write(json.dumps({"agentv_worker": 1}) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"id": request["id"], "answer": "x"}) + "\\n"); sys.stdout.flush()
"""


def eval_wall(folder: Path, target: str, workers: int) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentv_py",
            "eval",
            "dataset.yaml",
            "--target",
            target,
            "--workers",
            str(workers),
            "--out",
            f"{target}.jsonl",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{target}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return took


JUDGE = """
from agentv_py.judge import JudgeInput, JudgeResult, judge

@judge
def check(inp: JudgeInput) -> JudgeResult:
    return JudgeResult(score=1.0 if inp.get("total") == inp.get_expected("total") else 0.0)
"""


def judge_walls(folder: Path, cases: int, workers: int) -> dict[bool, float]:
    """Wall time of an eval whose only evaluator is a trivial Python code judge, spawned per case
    and persistent."""
    (folder / "judge.py").write_text(JUDGE)
    walls = {}
    for persistent in (False, True):
        rows = "".join(
            f"  - {{id: c{i}, input_messages: [{{role: user, content: hi}}], "
            f"expected_messages: [{{role: assistant, content: {{total: {i}}}}}]}}\n"
            for i in range(cases)
        )
        (folder / "judged.yaml").write_text(
            "execution:\n  target: perfect\n  evaluators:\n"
            f"    - {{type: code_judge, persistent: {str(persistent).lower()}, script: [{sys.executable}, judge.py]}}\n"
            "evalcases:\n" + rows
        )
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "agentv_py", "eval", "judged.yaml", "--workers", str(workers), "--out", "j.jsonl"],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        walls[persistent] = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"judge eval exit {done.returncode}\n{done.stderr[-2000:]}")
    return walls


def protocol_overhead(folder: Path, requests: int) -> tuple[float, float]:
    """(µs per request through Worker.request, µs per bare pipe round trip)."""
    (folder / "echo.py").write_text(ECHO)
    (folder / "trivial.py").write_text(TRIVIAL_WORKER)
    echo = subprocess.Popen([sys.executable, str(folder / "echo.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert echo.stdin is not None and echo.stdout is not None
    line = json.dumps({"v": 1, "id": "0", "case_id": "c", "prompt": "p", "files": [], "images": []}).encode() + b"\n"
    started = time.perf_counter()
    for _ in range(requests):
        echo.stdin.write(line)
        echo.stdin.flush()
        echo.stdout.readline()
    bare = (time.perf_counter() - started) / requests * 1e6
    echo.stdin.close()
    echo.wait()
    worker = Worker(
        [sys.executable, str(folder / "trivial.py")], cwd=str(folder), env=None, registry=None, line_cap=1 << 20
    )
    assert worker.start(30) is None
    started = time.perf_counter()
    for i in range(requests):
        reply = worker.request({"v": 1, "id": str(i), "case_id": "c", "prompt": "p", "files": [], "images": []}, 30)
        assert reply.data is not None
    through = (time.perf_counter() - started) / requests * 1e6
    worker.stop()
    return through, bare


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--import-seconds", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--judge-cases", type=int, default=1000, help="cases of the code-judge comparison")
    args = parser.parse_args()
    print_calibration()
    with tempfile.TemporaryDirectory(prefix="agentv-bench-workers-") as tmp:
        folder = Path(tmp)
        (folder / "extractor.py").write_text(EXTRACTOR.format(seconds=args.import_seconds))
        (folder / "fx").mkdir()
        cases = []
        for i in range(args.cases):
            (folder / "fx" / f"c{i}.json").write_text(json.dumps({"total": i}))
            cases.append(
                f"  - {{id: c{i}, input_messages: [{{role: user, content: [{{type: file, value: fx/c{i}.json}}]}}], "
                f"expected_messages: [{{role: assistant, content: {{total: {i}}}}}]}}\n"
            )
        (folder / "dataset.yaml").write_text(
            "execution:\n  evaluators:\n    - {type: field_accuracy, fields: [{path: total}]}\nevalcases:\n"
            + "".join(cases)
        )
        (folder / ".agentv").mkdir()
        python = sys.executable
        (folder / ".agentv" / "targets.yaml").write_text(
            textwrap.dedent(
                f"""
                targets:
                  - {{name: spawn, provider: cli, command_template: "{python} extractor.py {{FILES}}",
                      timeout_seconds: 60}}
                  - {{name: worker, provider: cli, mode: worker, command_template: "{python} extractor.py --worker",
                      timeout_seconds: 60}}
                  - {{name: python, provider: python, callable: "extractor:extract", path: ".", timeout_seconds: 60}}
                  - {{name: perfect, provider: mock, echo_expected: true}}
                """
            )
        )
        print(f"{args.cases} cases, an extractor whose import takes {args.import_seconds:g} s, {args.workers} workers")
        walls = {target: eval_wall(folder, target, args.workers) for target in ("worker", "python", "spawn")}
        for target in ("spawn", "worker", "python"):
            ratio = walls["spawn"] / walls[target]
            print(f"  {target:>6}: {walls[target]:7.2f} s" + ("" if target == "spawn" else f"  ({ratio:5.1f}x faster)"))
        judged = judge_walls(folder, args.judge_cases, args.workers)
        print(
            f"a trivial Python code judge, {args.judge_cases} cases: spawned per case {judged[False]:.2f} s, "
            f"persistent {judged[True]:.2f} s ({judged[False] / judged[True]:.1f}x faster)"
        )
        through, bare = protocol_overhead(folder, args.requests)
        print(
            f"protocol, {args.requests} requests: Worker.request {through:.1f} us, bare pipe round trip {bare:.1f} us, "
            f"overhead {(through - bare) / 1000:.3f} ms per request"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
