"""Do this tool's scores match real AgentV v4.42.4 on AgentV's own examples?

For every dataset under AgentV's `examples/` (a YAML file with a top-level `tests:`) whose graders
include deterministic ones (contains*, icontains*, regex, equals, starts-with, ends-with, is-json,
field-accuracy, tool-trajectory, latency/cost/token-usage/execution-metrics, code graders that call
no model, composites of those), runs BOTH the npm `agentv` 4.42.4 (`agentv eval run`) and this tool
(`agentv eval`) on the same copy of the example, with the same answers, and prints per dataset and
per case both tools' scores, and the per-grader scores where they differ.

The same answers: a case whose target is an LLM (`llm`, `default`, ... resolved through AgentV's root
`.agentv/targets.yaml` `use_target: ${{ LLM_TARGET }}` aliases) talks to a loopback OpenAI-compatible
stand-in on 127.0.0.1 (`agentv_parity_cases.StandIn`: LLM_TARGET/AGENT_TARGET/GRADER_TARGET=openai,
OPENAI_ENDPOINT pointing at it), which answers each case deterministically; a case whose target is a
`cli` one runs the same command in both tools. LLM graders are not deterministic: a dataset with no
other grader is skipped, and in a mixed one only the deterministic graders' scores are compared.

Each example is copied to OUT/<dataset> (with AgentV's root `.agentv/` and a `.git` marker, so both
tools stop there), so neither tool writes into the examples. Needs `bun` on PATH (AgentV's
TypeScript graders run with `bun run`): pass --bun-dir.

    python scripts/agentv_parity.py /tmp/m/npm-agentv/node_modules/.bin/agentv /tmp/m/av442/examples \\
        --bun-dir /tmp/m/npm-bun/node_modules/.bin [--out /tmp/m/parity] [--only assert] [--json FILE]

Exit 0 when every deterministic score matched, 1 when some differ or a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from agentv_parity_cases import Dataset, StandIn, grader_kind, read_dataset

OURS = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "agentv"
TIMEOUT = 600
EPS = 1e-6


@dataclass
class Row:
    score: float | None
    status: str
    graders: dict[str, float | None] = field(default_factory=dict)  # "type#n" -> score, deterministic only
    error: str = ""


@dataclass
class Outcome:
    name: str
    skip: str = ""
    validate: str = ""  # our `agentv validate` message when it refused
    agentv: dict[str, Row] = field(default_factory=dict)
    ours: dict[str, Row] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    compare_case_scores: bool = True


ALIASES = {"code-judge": "code-grader", "llm-judge": "llm-grader"}  # our type names -> AgentV's


def _norm(kind: str) -> str:
    kind = kind.replace("_", "-").lower()
    return ALIASES.get(kind, kind)


def _det_keys(entries: list[dict[str, Any]], det_types: set[str], type_key: str) -> dict[str, float | None]:
    """Deterministic graders' scores keyed by type and occurrence (`contains#2`): both tools keep
    a case's graders in file order (suite ones first), so the n-th `contains` is the same check."""
    seen: dict[str, int] = {}
    out: dict[str, float | None] = {}
    for entry in entries:
        name = str(entry.get("name", ""))
        nested = entry.get("scores") or entry.get("evaluator_results")
        if (name.startswith("turn-") or name == "conversation") and isinstance(nested, list):
            # a conversation case: each turn's graders (AgentV's `scores`, our `evaluator_results`)
            inner = _det_keys(nested, det_types, type_key)
            out.update({f"{name}/{key}": score for key, score in inner.items()})
            continue
        kind = _norm(str(entry.get(type_key, entry.get("type", "?"))))
        if kind not in det_types:
            continue
        seen[kind] = seen.get(kind, 0) + 1
        score = entry.get("score")
        out[f"{kind}#{seen[kind]}"] = float(score) if isinstance(score, int | float) else None
    return out


def read_agentv(run_dir: Path, det_types: set[str]) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    index = run_dir / "index.jsonl"
    if not index.is_file():
        return rows
    for line in index.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        rows[str(r.get("test_id"))] = Row(
            score=r.get("score"),
            status=str(r.get("execution_status", "")),
            graders=_det_keys(r.get("scores") or [], det_types, "type"),
            error=str(r.get("error") or "")[:200],
        )
    return rows


def read_ours(path: Path, det_types: set[str]) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        case_id = r.get("eval_id", r.get("id", r.get("case_id", r.get("test_id"))))
        results = r.get("evaluator_results") or []
        errors = [f"{e.get('name')}: {e.get('reasoning', '')[:120]}" for e in results if e.get("status") == "error"]
        rows[str(case_id)] = Row(
            score=r.get("score"),
            status=str(r.get("verdict")) + ("" if r.get("status") == "ok" else f" ({r.get('status')})"),
            graders=_det_keys(results, det_types, "type"),
            error=(str(r.get("error") or "") + " ".join(errors))[:200],
        )
    return rows


def example_root(examples: Path, dataset: Path) -> Path:
    parts = dataset.relative_to(examples).parts
    depth = 2 if parts[0] in ("features", "showcase") and len(parts) > 2 else 1
    return examples.joinpath(*parts[:depth])


def environment(scratch: Path, endpoint: str, bun_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    home = scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        AGENTV_HOME=str(home / ".agentv"),
        AGENTV_NO_UPDATE_CHECK="1",
        DO_NOT_TRACK="1",
        NO_UPDATE_NOTIFIER="1",
        PYTHONDONTWRITEBYTECODE="1",
        LLM_TARGET="openai",
        AGENT_TARGET="openai",
        GRADER_TARGET="openai",
        OPENAI_ENDPOINT=endpoint,
        OPENAI_BASE_URL=endpoint,
        OPENAI_API_KEY="loopback-stand-in",
        OPENAI_MODEL="stand-in",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    if bun_dir:
        env["PATH"] = bun_dir + os.pathsep + env.get("PATH", "")
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> int:
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        log.write_text(f"timed out after {TIMEOUT}s\n", encoding="utf-8")
        return -1
    log.write_text(f"$ {' '.join(argv)}\nexit {done.returncode}\n{done.stdout}\n--- stderr\n{done.stderr}", "utf-8")
    return done.returncode


def _last_lines(log: Path, n: int = 3) -> str:
    lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return " | ".join(lines[-n:])[:400]


def compare(ds: Dataset, outcome: Outcome) -> None:
    for case in ds.cases:
        a, o = outcome.agentv.get(case.id), outcome.ours.get(case.id)
        if a is None or o is None:
            outcome.differences.append(f"{case.id}: row missing in {'AgentV' if a is None else 'ours'}")
            continue
        a_err, o_err = a.status == "execution_error", o.status.endswith("(error)")
        if (a_err or o_err) and a.graders and o.graders:  # an LLM grader failed: the others still count
            outcome.notes.append(f"{case.id}: execution error beside scored graders: {(a.error or o.error)[:120]}")
        elif a_err or o_err:
            who = "both" if a_err and o_err else "AgentV" if a_err else "ours"
            said = a.error if a_err else o.error
            (outcome.notes if a_err and o_err else outcome.differences).append(
                f"{case.id}: execution error in {who}: {said[:160]}"
            )
            continue
        for key in sorted(set(a.graders) | set(o.graders)):
            sa, so = a.graders.get(key), o.graders.get(key)
            if sa is None or so is None or abs(sa - so) > EPS:
                outcome.differences.append(f"{case.id}: {key} AgentV {_fmt(sa)} ours {_fmt(so)}")
        if (
            outcome.compare_case_scores
            and a.score is not None
            and o.score is not None
            and abs(a.score - o.score) > EPS
            and not any(d.startswith(f"{case.id}:") for d in outcome.differences)
        ):
            outcome.differences.append(f"{case.id}: case score AgentV {_fmt(a.score)} ours {_fmt(o.score)}")


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}".rstrip("0").rstrip(".") if x != int(x) else f"{x:.0f}"


def parity(ds: Dataset, examples: Path, args: argparse.Namespace) -> Outcome:
    rel = ds.path.relative_to(examples)
    name = rel.as_posix().removesuffix(".yaml").replace("/evals/", "/").replace("/", "__")
    outcome = Outcome(name=rel.as_posix(), skip=ds.skip)
    scratch = Path(args.out) / name
    shutil.rmtree(scratch, ignore_errors=True)
    root = example_root(examples, ds.path)
    copy = scratch / "repo" / root.relative_to(examples.parent)
    shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns("node_modules", ".git"))
    if (examples.parent / ".agentv").is_dir():
        shutil.copytree(examples.parent / ".agentv", scratch / "repo" / ".agentv", dirs_exist_ok=True)
    (scratch / "repo" / ".git").mkdir()
    dataset = scratch / "repo" / ds.path.relative_to(examples.parent)
    with StandIn([*ds.cases, *ds.turns]) as model:
        env = environment(scratch, model.endpoint, args.bun_dir)
        if run([str(args.ours), "validate", str(dataset)], dataset.parent, env, scratch / "validate.log") != 0:
            outcome.validate = _last_lines(scratch / "validate.log", 4)
        if ds.skip:
            return outcome
        av_out, ours_out = scratch / "agentv-run", scratch / "ours.jsonl"
        av_cmd = [args.agentv, "eval", "run", str(dataset), "--output", str(av_out), "--workers", "1", "--no-cache"]
        ours_cmd = [str(args.ours), "eval", str(dataset), "-o", str(ours_out), "-w", "1", "--no-cache"]
        av_rc = run(av_cmd, scratch / "repo", env, scratch / "agentv.log")
        ours_rc = run(ours_cmd, scratch / "repo", env, scratch / "ours.log")
        if model.unmatched:
            outcome.notes.append(f"stand-in: {len(model.unmatched)} request(s) matched no case")
    det = {_norm(str(g.get("type"))) for c in ds.cases for g in c.graders if isinstance(g, dict)}
    det = {t for t in det if any(_is_det(g, t, ds) for c in ds.cases for g in c.graders)}
    outcome.compare_case_scores = set(ds.kinds.values()) == {"det"}
    outcome.agentv = read_agentv(av_out, det)
    outcome.ours = read_ours(ours_out, det)
    if not outcome.agentv:
        outcome.notes.append(f"AgentV exit {av_rc}, no rows: {_last_lines(scratch / 'agentv.log')}")
    if not outcome.ours:
        outcome.notes.append(f"ours exit {ours_rc}, no rows: {_last_lines(scratch / 'ours.log')}")
    if outcome.agentv and outcome.ours:
        compare(ds, outcome)
    return outcome


def _is_det(grader: Any, kind: str, ds: Dataset) -> bool:
    return (
        isinstance(grader, dict)
        and _norm(str(grader.get("type"))) == kind
        and grader_kind(grader, ds.path.parent) == "det"
    )


def render(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        print(f"\n## {o.name}")
        if o.validate:
            print(f"  ours `validate` refused: {o.validate}")
        if o.skip:
            print(f"  skipped: {o.skip}")
            continue
        for note in o.notes:
            print(f"  note: {note}")
        scope = "case scores" if o.compare_case_scores else "deterministic graders only (mixed with LLM graders)"
        print(f"  compared: {scope}")
        print(f"  {'case':40} {'AgentV':>8} {'ours':>8}  status AgentV / ours")
        for case_id in sorted(set(o.agentv) | set(o.ours)):
            a, b = o.agentv.get(case_id), o.ours.get(case_id)
            sa, sb = _fmt(a.score if a else None), _fmt(b.score if b else None)
            status = f"{a.status if a else '-'} / {b.status if b else '-'}"
            print(f"  {case_id[:40]:40} {sa:>8} {sb:>8}  {status}")
            for row, who in ((a, "AgentV"), (b, "ours")):
                if row and row.error:
                    print(f"      {who} error: {row.error}")
        for diff in o.differences:
            print(f"  DIFF {diff}")
        if not o.differences and o.agentv and o.ours:
            print("  all compared scores equal")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("agentv", help="the npm agentv 4.42.4 binary")
    parser.add_argument("examples", type=Path, help="AgentV's examples/ folder (its parent holds .agentv/)")
    parser.add_argument("--ours", type=Path, default=OURS, help="this tool's agentv (default: the repo's .venv)")
    parser.add_argument("--bun-dir", default="", help="folder holding `bun`, put first on PATH")
    parser.add_argument("--out", default="/tmp/agentv-parity", help="scratch folder (one subfolder per dataset)")
    parser.add_argument("--only", action="append", default=[], help="only datasets whose path contains this")
    parser.add_argument("--json", type=Path, help="also write every outcome as JSON here")
    args = parser.parse_args(argv)
    examples = args.examples.resolve()
    files = sorted(p for p in examples.rglob("*.y*ml") if "node_modules" not in p.parts and ".agentv" not in p.parts)
    outcomes: list[Outcome] = []
    for path in files:
        if args.only and not any(word in path.as_posix() for word in args.only):
            continue
        try:
            ds = read_dataset(path)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            print(f"{path}: unreadable ({exc})", file=sys.stderr)
            continue
        if ds.skip.startswith("not a dataset"):
            continue
        print(f"... {path.relative_to(examples)}", file=sys.stderr, flush=True)
        outcomes.append(parity(ds, examples, args))
    render(outcomes)
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], default=lambda r: r.__dict__, indent=1))
    bad = [o for o in outcomes if not o.skip and (o.differences or not (o.agentv and o.ours))]
    ran = [o for o in outcomes if not o.skip]
    print(f"\n{len(outcomes)} datasets, {len(ran)} compared, {len(ran) - len(bad)} equal, {len(bad)} differ or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
