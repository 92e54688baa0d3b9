"""llm_judge `prompt: {script: [...]}` (AgentV's definePromptTemplate, 2026-01-28): a real script
prints the judge's user prompt from the code-judge payload; the judge is a scripted chat server."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentv_py.errors import ConfigError
from agentv_py.evaluators import EvalContext, run_evaluator
from agentv_py.judge import JudgeInput, run_prompt_template
from agentv_py.loading import load_dataset
from agentv_py.models.dataset import EvalCase
from agentv_py.models.judges import LlmJudgeConfig
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.runner.targets import OpenAIRunner
from tests.chat_server import text

KEY = "sk-prompt-SECRET-55555"
VALID = {"score": 0.9, "hits": ["mentions Promises"], "misses": [], "reasoning": "good"}

# The prompt-template-sdk example's custom-evaluator.ts, in Python with agentv's SDK.
PROMPT_SCRIPT = """
from agentv_py.judge import JudgeInput, prompt_template


@prompt_template
def custom(ctx: JudgeInput) -> str:
    rubric = ctx.config.get("rubric")
    strict = ctx.config.get("strictMode")
    parts = [f"## Question\\n{ctx.question}", f"## Candidate Answer\\n{ctx.candidate_answer}"]
    if ctx.reference_answer:
        parts.append(f"## Reference Answer\\n{ctx.reference_answer}")
    if rubric:
        parts.append(f"## Evaluation Rubric\\n{rubric}")
    if strict:
        parts.append("**Note:** Strict mode enabled.")
    return "\\n\\n".join(parts)
"""


def judge(server: Any) -> OpenAIRunner:
    config = OpenAITarget.model_validate(
        {
            "name": "judge",
            "provider": "openai",
            "model": "m",
            "api_key": KEY,
            "base_url": server.base_url,
            "max_retries": 1,
        }
    )
    return OpenAIRunner(config, [KEY])


def context(tmp_path: Path, server: Any, answer: str = "Async/await wraps Promises.") -> EvalContext:
    case = EvalCase.model_validate(
        {
            "id": "c1",
            "expected_outcome": "explains async/await",
            "input": "Explain async/await in JavaScript.",
            "expected_output": "Syntactic sugar over Promises.",
        }
    )
    return EvalContext(
        eval_id="c1",
        dataset="d",
        dataset_dir=tmp_path,
        answer=answer,
        expected="Syntactic sugar over Promises.",
        question="Explain async/await in JavaScript.",
        case=case,
        judges={"judge": judge(server)} if server else {},
        default_judge="judge",
    )


def llm(tmp_path: Path, source: str, **prompt: Any) -> LlmJudgeConfig:
    (tmp_path / "prompt.py").write_text(source)
    return LlmJudgeConfig.model_validate(
        {"type": "llm_judge", "name": "p", "prompt": {"script": ["python3", "prompt.py"], **prompt}}
    )


def test_the_scripts_output_is_the_judges_user_prompt(tmp_path, chat_server):
    chat_server.reply(text(json.dumps(VALID)))
    cfg = llm(tmp_path, PROMPT_SCRIPT, config={"rubric": "- Must mention Promises", "strictMode": True})
    result = run_evaluator(cfg, context(tmp_path, chat_server))

    assert (result.status, result.score, result.hits) == ("processed", 0.9, ["mentions Promises"])
    [request] = chat_server.requests
    system, user = request.body["messages"]
    assert system["role"] == "system" and "JSON Schema" in system["content"]
    assert user == {
        "role": "user",
        "content": "## Question\nExplain async/await in JavaScript.\n\n"
        "## Candidate Answer\nAsync/await wraps Promises.\n\n"
        "## Reference Answer\nSyntactic sugar over Promises.\n\n"
        "## Evaluation Rubric\n- Must mention Promises\n\n"
        "**Note:** Strict mode enabled.",
    }


def test_the_prompt_is_used_as_printed_never_rendered(tmp_path, chat_server):
    """The answer is data: `{{expected_output}}` inside it must not pull in the reference."""
    chat_server.reply(text(json.dumps(VALID)))
    source = "import json, sys\nprint('Answer: ' + json.load(sys.stdin)['candidate_answer'])\n"
    run_evaluator(llm(tmp_path, source), context(tmp_path, chat_server, answer="see {{expected_output}}"))
    assert chat_server.requests[0].body["messages"][1]["content"] == "Answer: see {{expected_output}}"


FAILURES = [
    pytest.param(
        "import sys\nprint('half a prompt')\nprint('Traceback: KeyError', file=sys.stderr)\nsys.exit(1)\n",
        {},
        "llm_judge 'p': prompt script exited with code 1 (stderr: Traceback: KeyError)",
        id="exit-1",
    ),
    pytest.param(
        "print('   ')\n",
        {},
        "llm_judge 'p': prompt script printed nothing on stdout (the judge's prompt expected)",
        id="empty",
    ),
    pytest.param(
        "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe')\n",
        {},
        "llm_judge 'p': prompt script stdout is not valid UTF-8 (byte offset 0)",
        id="not-utf8",
    ),
    pytest.param(
        "import time\ntime.sleep(60)\n",
        {"timeout_seconds": 0.5},
        "llm_judge 'p': prompt script timed out after 0.5s (process group killed)",
        id="timeout",
    ),
    pytest.param(
        "import sys\nsys.stdout.write('x' * (2 * 1024 * 1024))\n",
        {},
        "llm_judge 'p': prompt script output exceeded the 1 MB cap (process group killed)",
        id="too-long",
    ),
]


@pytest.mark.parametrize(("source", "options", "message"), FAILURES)
def test_a_failing_script_is_the_evaluators_error_and_the_judge_is_not_called(
    tmp_path, chat_server, source, options, message
):
    result = run_evaluator(llm(tmp_path, source, **options), context(tmp_path, chat_server))
    assert (result.status, result.score, result.misses) == ("error", 0.0, [message])
    assert chat_server.requests == []


def test_the_sdk_refuses_a_prompt_that_is_not_text():
    out = io.StringIO()
    assert run_prompt_template(lambda inp: 7, io.StringIO("{}"), out) == 1  # type: ignore[arg-type,return-value]
    assert run_prompt_template(lambda inp: "  ", io.StringIO("{}"), out) == 1
    assert out.getvalue() == ""
    assert run_prompt_template(lambda inp: f"Q: {inp.question}", io.StringIO('{"question": "why?"}'), out) == 0
    assert out.getvalue() == "Q: why?\n"


def test_the_sdk_reads_the_payload_it_is_given():
    seen: list[JudgeInput] = []
    payload = {"candidate_answer": "a", "config": {"rubric": "r"}, "expected_outcome": "o"}
    run_prompt_template(lambda inp: seen.append(inp) or "p", io.StringIO(json.dumps(payload)), io.StringIO())
    assert (seen[0].candidate_answer, seen[0].config, seen[0].expected_outcome) == ("a", {"rubric": "r"}, "o")


DATASET = """\
execution:
  evaluators:
    - name: custom
      type: llm_judge
      prompt:
        script: {script}
        config: {{rubric: be strict}}
evalcases:
  - id: c1
    input: Explain.
    expected_output: x
"""


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        pytest.param(
            "[python3, prompts/missing.py]",
            "dataset.yaml:6: execution.evaluators[0].prompt.script: script file not found: prompts/missing.py "
            "(relative to {root})",
            id="missing-file",
        ),
        pytest.param(
            "[no-such-program-xyz, prompts/p.py]",
            "dataset.yaml:6: execution.evaluators[0].prompt.script: command not found: no-such-program-xyz "
            "(not on PATH)",
            id="missing-program",
        ),
    ],
)
def test_a_prompt_script_that_cannot_run_stops_the_load(ws, script, problem):
    ws.file("prompts/p.py", "print('p')\n")
    ws.dataset(DATASET.format(script=script))
    with pytest.raises(ConfigError) as caught:
        load_dataset("dataset.yaml")
    messages = [str(p) for p in caught.value.problems]
    assert messages == [problem.format(root=ws.root)]


def test_a_prompt_script_that_can_run_loads(ws):
    ws.file("prompts/p.py", "print('p')\n")
    ws.dataset(DATASET.format(script="[python3, prompts/p.py]"))
    loaded = load_dataset("dataset.yaml")
    [config] = loaded.cases[0].evaluators
    assert isinstance(config, LlmJudgeConfig)
    assert config.prompt_script is not None
    assert (config.prompt_script.script, config.prompt_script.config) == (
        ["python3", "prompts/p.py"],
        {"rubric": "be strict"},
    )
