"""`agentv eval` with azure, anthropic and gemini targets and judges, each against a local
server speaking its provider's format (tests/provider_servers.py): rows, traces, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from tests.chat_server import error, text
from tests.cli.test_eval import invoke, rows
from tests.conftest import REPO_ROOT
from tests.pngs import png
from tests.provider_servers import KEY, PROVIDERS, server_for, target_config

VERDICT = json.dumps({"score": 0.8, "hits": ["red"], "misses": [], "reasoning": "ok"})


@pytest.fixture(params=PROVIDERS)
def server(request):
    with server_for(request.param) as running:
        running.provider = request.param
        yield running


@pytest.fixture(autouse=True)
def env_key(monkeypatch):
    monkeypatch.setenv("PROVIDER_KEY", KEY)


def write_targets(ws, server, **extra):
    """The provider target (key from ${{ PROVIDER_KEY }}, fast retries) and a cli target."""
    model = target_config(server.provider, server, api_key="${{ PROVIDER_KEY }}", retry_initial_delay_ms=1, **extra)
    model["name"] = "model"
    echo = {"name": "echo", "provider": "cli", "command_template": "echo A red square."}
    ws.targets(yaml.safe_dump({"targets": [model, echo]}, sort_keys=False))


def write_dataset(ws, target: str, image: bool = False, url: bool = False):
    ws.file("photo.png", png(3, 3))
    ws.file("judges/q.md", "Question: {{input}}\nAnswer: {{output}}\n")
    item = "\n                  - {type: image, value: photo.png}" if image else ""
    if url:
        item = "\n                  - {type: image_url, value: 'https://example.com/photo.png'}"
    ws.dataset(f"""
        execution:
          target: {target}
          evaluators:
            - {{type: llm_judge, name: quality, prompt: judges/q.md, target: model}}
        evalcases:
          - id: c1
            input_messages:
              - role: user
                content:
                  - {{type: text, value: What is shown?}}{item}
            expected_outcome: A red square.
    """)


def test_the_provider_target_answers_and_judges_itself(ws, server):
    write_targets(ws, server, vision=True)
    write_dataset(ws, "model", image=True)
    server.reply(text("A red square."), text(VERDICT))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    [row] = rows("o.jsonl")
    assert (row["status"], row["candidate_answer"], row["score"]) == ("ok", "A red square.", 0.8)
    assert row["trace"]["token_usage"] == {"input": 42, "output": 7} and row["trace"]["http_attempts"] == 1
    assert row["trace"]["judge_token_usage"] == {"input": 42, "output": 7}
    assert row["evaluator_results"][0]["details"]["judge"]["target"] == "model"
    assert len(server.requests) == 2
    everything = (ws.root / "o.jsonl").read_text() + result.output
    assert KEY not in everything


def test_a_provider_judges_a_cli_target(ws, server):
    write_targets(ws, server)
    write_dataset(ws, "echo")
    server.reply(text(VERDICT))
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 0, result.output
    [row] = rows("o.jsonl")
    assert (row["candidate_answer"], row["score"]) == ("A red square.\n", 0.8)
    [request] = server.requests
    assert "Answer: A red square." in json.dumps(request.body)


def test_a_failing_provider_is_an_error_row_without_the_key(ws, server):
    write_targets(ws, server, max_retries=1)
    write_dataset(ws, "model")
    server.reply(*[error(500, f"upstream failed for {KEY}")] * 4)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl", "--max-retries", "0")
    assert result.exit_code != 0
    [row] = rows("o.jsonl")
    assert row["status"] == "error"
    assert row["error"] == (
        f"target 'model' failed: HTTP 500 from {server.root_url} (2 attempts): upstream failed for ***"
    )
    assert KEY not in (ws.root / "o.jsonl").read_text() + result.output


def test_a_model_target_without_vision_refuses_images_before_the_run(ws, server):
    write_targets(ws, server)
    write_dataset(ws, "model", image=True)
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert "error: target 'model' is not marked vision: true, but case 'c1' has images\n" in result.stderr
    assert server.requests == []


def test_gemini_refuses_image_urls_before_the_run(ws):
    with server_for("gemini") as server:
        server.provider = "gemini"
        write_targets(ws, server, vision=True)
        write_dataset(ws, "model", url=True)
        result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
        assert result.exit_code == 2, result.output
        assert result.stderr == (
            "error: target 'model' (provider gemini) cannot take image URLs, but case 'c1' gives one (photo.png)\n"
            "hint: give the image as a local file or a data URI; agentv does not fetch URLs\n"
        )
        assert server.requests == []


def test_a_missing_key_stops_the_run_before_it_starts(ws, monkeypatch):
    for var in ("ANTHROPIC_API_KEY",):
        monkeypatch.delenv(var, raising=False)
    ws.targets("targets:\n  - {name: model, provider: anthropic, model: claude-x}\n")
    write_dataset(ws, "model")
    result = invoke("eval", "dataset.yaml", "--out", "o.jsonl")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: target 'model' has no API key: set api_key (e.g. api_key: ${{ ANTHROPIC_API_KEY }}) "
        "or the ANTHROPIC_API_KEY environment variable\n"
    )


def test_a_real_agentv_process_runs_a_gemini_target(ws):
    with server_for("gemini") as server:
        server.provider = "gemini"
        write_targets(ws, server)
        write_dataset(ws, "model")
        server.reply(text("A red square."), text(VERDICT))
        proc = subprocess.run(
            [sys.executable, "-m", "agentv_py", "eval", "dataset.yaml", "--out", "o.jsonl"],
            cwd=ws.root,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        )
        assert proc.returncode == 0, proc.stderr
        [row] = rows(ws.root / "o.jsonl")
        assert (row["candidate_answer"], row["score"]) == ("A red square.", 0.8)
        assert KEY not in proc.stdout + proc.stderr
