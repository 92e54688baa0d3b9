#!/usr/bin/env python3
"""LLM-judge benchmark: what agentv adds per judged case, next to the model call itself.

A chat-completions server on 127.0.0.1 (tests/chat_server.py) answers every request at once with a
valid judge reply, so what is measured is client-side work. From one run it prints, for N cases
at 4 workers:
  1. the floor: N chat-completions calls through the same `openai` SDK client, 4 threads;
  2. `agentv eval` in-process (no target process: a mock target) with one `llm_judge` per case,
     plain and with a 64x64 PNG attached to each case (sent as a base64 image part);
  per-case cost and its ratio to the floor.

Usage: python scripts/bench_llm.py [--cases 400] [--workers 4]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import print_calibration, run_threads  # noqa: E402

from tests.chat_server import ChatServer, text  # noqa: E402
from tests.pngs import png  # noqa: E402

REPLY = json.dumps({"score": 0.9, "hits": ["ok"], "reasoning": "fine"})


def floor(server: ChatServer, cases: int, workers: int) -> float:
    import openai

    client = openai.OpenAI(api_key="sk-bench", base_url=server.base_url, max_retries=0)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "warm"}])

    def call() -> None:
        client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "system", "content": "judge"}, {"role": "user", "content": "x"}]
        ).parse()

    return run_threads(call, cases, workers)


def agentv_run(server: ChatServer, cases: int, workers: int, images: bool) -> float:
    from agentv_py.eval_plan import EvalRequest
    from agentv_py.session import execute, plan_eval

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        (root / "img.png").write_bytes(png(64, 64))
        (root / ".agentv").mkdir()
        (root / ".agentv" / "targets.yaml").write_text(
            "targets:\n  - {name: t, provider: mock, response: 'A cat.'}\n"
            f"  - {{name: judge, provider: openai, model: m, base_url: '{server.base_url}', "
            "vision: true, max_retries: 0}\n"
        )
        image = ", {type: image, value: img.png}" if images else ""
        lines = [
            "execution:",
            "  target: t",
            "  judge_target: judge",
            "  evaluators: [{type: llm_judge, prompt: 'Grade {{output}} for {{input}}'}]",
            "evalcases:",
        ]
        lines += [
            f"  - {{id: c{i}, input: [{{role: user, content: [{{type: text, value: Describe.}}{image}]}}]}}"
            for i in range(cases)
        ]
        (root / "dataset.yaml").write_text("\n".join(lines) + "\n")
        plan = plan_eval(EvalRequest(root / "dataset.yaml", workers=workers, out=str(root / "out.jsonl")))
        started = time.perf_counter()
        summary = execute(plan)
        elapsed = time.perf_counter() - started
        assert summary.completed == cases and summary.passed == cases, "every case should pass"
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    print_calibration()
    with ChatServer() as server:
        server.default = text(REPLY)
        agentv_run(server, 20, args.workers, images=False)  # warm-up: imports, first client
        base = floor(server, args.cases, args.workers)
        plain = agentv_run(server, args.cases, args.workers, images=False)
        with_images = agentv_run(server, args.cases, args.workers, images=True)
    per = lambda seconds: seconds / args.cases * 1000  # noqa: E731
    print(f"cases={args.cases} workers={args.workers}")
    print(f"floor: SDK chat call alone          {per(base):7.2f} ms/case")
    print(f"agentv llm_judge (text)             {per(plain):7.2f} ms/case  ratio {plain / base:.2f}")
    print(f"agentv llm_judge (+ 64x64 PNG part) {per(with_images):7.2f} ms/case  ratio {with_images / base:.2f}")


if __name__ == "__main__":
    main()
