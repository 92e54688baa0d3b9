#!/usr/bin/env python3
"""Cold load of a big dataset (issue 28, point 4): `agentv validate` of the peer harness's 10k-case
invoice dataset (25 MB of YAML) against PyYAML's bare CParser event loop over the same file, and
the same cases as a JSONL dataset against an orjson load of that file.

Each figure is the median CPU (user + sys) of `--repeat` runs, the commands interleaved so that a
busy spell of a shared machine hits all of them alike, with bytecode cached as an installed
package has it (`installed_env`; one warm-up run first). "Cold" is an empty parse cache
(AGENTV_CACHE_DIR) for every run; the warm figure reads the cache the cold one wrote. The JSONL
figure is what reading the JSONL file costs beyond the validation both formats share (the file
read, parsed, checked line by line and its cases unpacked: `read_jsonl` and `unpack_cases`),
timed inside one process, against an orjson load of the file in another: every line loaded by
orjson, the values of 1000 lines (the loader's chunk) held at a time, the cyclic collector
paused as agentv pauses it. A load gives the file's values, as the reader must: an orjson parse
whose values are dropped line by line (the bare floor, printed too) costs about half as much,
so no reader that gives the cases could reach it. `read_jsonl` alone (the checking pass, the
cases left packed) is printed as well. The calibration figure is a fixed pure-Python loop, so
that a slower machine can be told from a regression.

Usage: python scripts/bench_load.py --bench ../shared/bench [--data /tmp/bench-data] [--size 10000] [--repeat 5]
                                   [--compare DIR]
The dataset is generated with the harness's `gen_dataset.py N --out DATA` when it is missing.
`--compare DIR`: also the cold validate of the agentv in DIR (a checkout of an earlier commit,
e.g. `git worktree add DIR COMMIT`; run with it first on PYTHONPATH), interleaved with the rest.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import installed_env, measured_child, report

from agentv_py.loading.yaml_loader import Loader

GOAL_YAML = 1.6  # cold validate <= 1.6x the event loop's CPU
GOAL_JSONL = 1.0  # reading the JSONL file <= an orjson load of it

EVENT_LOOP = (
    "import sys\nfrom yaml._yaml import CParser\n"
    "p = CParser(open(sys.argv[1], 'rb'))\nwhile p.check_event():\n    p.get_event()\n"
)
CALIBRATION = "total = 0\nfor i in range(10_000_000):\n    total += i % 7\n"
# The CPU of a section of a process, printed by the process itself (no start-up in it).
_TIMED = (
    "import resource, sys\ndef cpu():\n"
    "    u = resource.getrusage(resource.RUSAGE_SELF)\n    return u.ru_utime + u.ru_stime\n"
)
JSONL_READ = _TIMED + (
    "from pathlib import Path\nfrom agentv_py.loading.jsonl import read_jsonl\n"
    "from agentv_py.loading.source import unpack_cases\n"
    "start = cpu()\n_, raw = read_jsonl(Path(sys.argv[1]))\ncases = raw['evalcases']\n"
    "for i in range(0, len(cases), 1000):\n    unpack_cases(cases[i : i + 1000])\n"
    "print(cpu() - start)\n"
)
JSONL_CHECK = _TIMED + (
    "from pathlib import Path\nfrom agentv_py.loading.jsonl import read_jsonl\n"
    "start = cpu()\nread_jsonl(Path(sys.argv[1]))\nprint(cpu() - start)\n"
)
ORJSON_LOAD = _TIMED + (
    "import gc, orjson\nstart = cpu()\ngc.disable()\nchunk = []\nwith open(sys.argv[1], 'rb') as f:\n"
    "    for line in f:\n        chunk.append(orjson.loads(line))\n"
    "        if len(chunk) == 1000:\n            chunk = []\n"
    "chunk = []\ngc.enable()\nprint(cpu() - start)\n"
)
ORJSON_PARSE = _TIMED + (
    "import orjson\nstart = cpu()\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        orjson.loads(line)\n"
    "print(cpu() - start)\n"
)


def write_jsonl(dataset: Path, into: Path) -> Path:
    """The dataset's cases as `dataset.jsonl` (one compact JSON object a line) and its suite keys
    as the sidecar `dataset.yaml`, beside the dataset (so its file paths resolve alike)."""
    data = yaml.load(dataset.read_bytes(), Loader=Loader)  # agentv's reading: dates stay text
    cases = data.pop("evalcases")
    jsonl = into / "dataset.jsonl"
    with jsonl.open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n")
    (into / "dataset.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return jsonl


def timed_inside(code: str, path: Path, env: dict[str, str]) -> float:
    """The CPU seconds `code` prints, run on `path` from the file's folder: not from the checkout,
    whose `agentv_py` `python -c` would import ahead of the one PYTHONPATH names (`--compare`)."""
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=path.parent, env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", type=Path, help="the peer harness folder (its gen_dataset.py)")
    parser.add_argument("--data", type=Path, help="where the dataset is generated [default: BENCH/data]")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compare", type=Path, help="a checkout of another commit: its cold validate too")
    args = parser.parse_args()
    if args.data is None and args.bench is None:
        parser.error("give --bench (to generate the dataset) or --data (where it is)")
    data_root = (args.data or args.bench / "data").resolve()
    data = data_root / f"n{args.size}"
    if not (data / "evals" / "dataset.yaml").exists():
        if args.bench is None:
            parser.error(f"{data} has no evals/dataset.yaml; give --bench to generate it")
        gen = [sys.executable, str(args.bench.resolve() / "gen_dataset.py"), str(args.size), "--out", str(data_root)]
        subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
    dataset = data / "evals" / "dataset.yaml"
    agentv = str(Path(sys.executable).with_name("agentv"))
    with tempfile.TemporaryDirectory(prefix="agentv-load-") as scratch:
        work = Path(scratch)
        jsonl_dir = data / f".bench-load-{Path(scratch).name}"  # beside evals/: fixture paths resolve alike
        jsonl_dir.mkdir()
        try:
            jsonl = write_jsonl(dataset, jsonl_dir)
            cache = work / "cache"
            env = installed_env(work, AGENTV_CACHE_DIR=str(cache))
            validate_yaml = [agentv, "validate", str(dataset)]
            validate_jsonl = [agentv, "validate", str(jsonl)]
            loop = [sys.executable, "-c", EVENT_LOOP, str(dataset)]
            calibration = [sys.executable, "-c", CALIBRATION]
            other = {**env, "PYTHONPATH": str(args.compare.resolve())} if args.compare else None
            for argv in (validate_yaml, validate_jsonl):  # compile bytecode once; check it validates
                measured_child(argv, data, env)
                if other is not None:
                    measured_child(argv, data, other)
            names = ["loop", "cold", "warm", "jsonl", "jsonl-read", "jsonl-check", "orjson", "orjson-parse"]
            names += ["calibration", "before", "before-read"]
            runs: dict[str, list[float]] = {name: [] for name in names}
            for _ in range(args.repeat):
                runs["loop"].append(measured_child(loop, data, env)[1])
                shutil.rmtree(cache, ignore_errors=True)
                runs["cold"].append(measured_child(validate_yaml, data, env)[1])
                runs["warm"].append(measured_child(validate_yaml, data, env)[1])
                shutil.rmtree(cache, ignore_errors=True)
                runs["jsonl"].append(measured_child(validate_jsonl, data, env)[1])
                runs["jsonl-read"].append(timed_inside(JSONL_READ, jsonl, env))
                runs["jsonl-check"].append(timed_inside(JSONL_CHECK, jsonl, env))
                runs["orjson"].append(timed_inside(ORJSON_LOAD, jsonl, env))
                runs["orjson-parse"].append(timed_inside(ORJSON_PARSE, jsonl, env))
                runs["calibration"].append(measured_child(calibration, data, env)[1])
                if other is not None:
                    shutil.rmtree(cache, ignore_errors=True)
                    runs["before"].append(measured_child(validate_yaml, data, other)[1])
                    runs["before-read"].append(timed_inside(JSONL_READ, jsonl, other))
        finally:
            shutil.rmtree(jsonl_dir, ignore_errors=True)
    median = {name: statistics.median(times) for name, times in runs.items() if times}
    print(f"cold load of {args.size} cases ({dataset.stat().st_size / 1e6:.0f} MB of YAML), medians of {args.repeat}:")
    print(f"  calibration (a fixed pure-Python loop): {median['calibration']:.2f} s CPU")
    print(f"  PyYAML CParser event loop: {median['loop']:.2f} s CPU")
    report("cold validate (YAML)", median["cold"], median["loop"], "event loop", GOAL_YAML)
    if "before" in median:
        report(f"cold validate (YAML), {args.compare}", median["before"], median["loop"], "event loop", GOAL_YAML)
    print(f"  warm validate (YAML, parse cache read): {median['warm']:.2f} s CPU")
    print(f"  cold validate (JSONL): {median['jsonl']:.2f} s CPU")
    report("reading the JSONL file", median["jsonl-read"], median["orjson"], "orjson load", GOAL_JSONL)
    parse = median["orjson-parse"]
    print(f"    its checking pass alone (read_jsonl, cases left packed): {median['jsonl-check']:.2f} s CPU")
    ratio = median["jsonl-read"] / parse
    print(f"    an orjson parse dropping each line's values: {parse:.2f} s CPU (reading: {ratio:.2f}x)")
    if "before-read" in median:
        compared = f"reading the JSONL file, {args.compare}"
        report(compared, median["before-read"], median["orjson"], "orjson load", GOAL_JSONL)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
