"""Issue 11, point 4: secrets never reach disk or terminal.

A secret planted in the environment is used as `${{ VAR }}` by a cli target (in its command and
its `env:`) and as the API key of a judge target, and `$OPENAI_API_KEY` is the key of a model
target. Then everything that can echo it does: the target (answer, stderr, a crash), code judges
(reasoning, hits, misses, details at any depth and in dict keys, a failing judge's stderr), and a
chat server echoing the Authorization header it received. `agentv eval` runs as a real process;
the secret must appear in no output: the JSONL file, stdout, stderr.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentv_py.loading import load_dataset
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.models.results import ResultRow
from agentv_py.models.targets import CliTarget
from agentv_py.process.redact import MASK, Redactor, secret_forms
from agentv_py.runner.redaction import sent_keys
from agentv_py.runner.run import Run
from tests.chat_server import ChatServer, Recorded, Reply, error, text
from tests.conftest import REPO_ROOT, Workspace, make_row

SECRET = "sk-live-XYZ7f3Kq9WvB2mN8pR4tL6"  # in the cli target's command and env, and the judge's api_key
SECRET_2 = 'pw-"quoted"\\slash/ünï-98765'  # JSON-escapes differently: caught inside JSON text too
OPENAI_KEY = "sk-env-Default0Key1From2Env3"  # $OPENAI_API_KEY: the key a model target sends by default
PY = sys.executable

TARGET_SCRIPT = """\
import json, os, sys
token, token2, arg = os.environ["TOKEN"], os.environ["TOKEN2"], sys.argv[1]
print("using", token, "and", token2, file=sys.stderr)
if "{CASE}" == "crash":
    print("fatal: the server refused key " + arg, file=sys.stderr)
    sys.exit(3)
if "{CASE}" == "long-stderr":  # the secret is cut by the stderr tail
    print("x" * 280 + token + "y" * 10, file=sys.stderr)
    sys.exit(3)
if "{CASE}" == "text":
    print("The key is " + arg + " and the password " + token2)
else:
    print(json.dumps({"a": token2, "b": arg, "c": token}))
"""

LEAKY_JUDGE = """\
import json, os, sys
s, s2 = os.environ["AGENTV_TEST_SECRET"], os.environ["AGENTV_TEST_SECRET_2"]
payload = json.load(sys.stdin)
print(json.dumps({
    "score": 1,
    "hits": ["saw " + s],
    "misses": [s2],
    "reasoning": "the secret is " + s,
    "details": {s: {"nested": [{"deep " + s2: s}], "answer": payload["candidate_answer"]}, "plain": s2},
}))
"""

FAILING_JUDGE = """\
import os, sys
sys.stdin.read()
print("judge crashed holding " + os.environ["AGENTV_TEST_SECRET"], file=sys.stderr)
sys.exit(2)
"""

BAD_SCORE_JUDGE = """\
import json, os, sys
sys.stdin.read()
print(json.dumps({"score": "not a number " + os.environ["AGENTV_TEST_SECRET"]}))
"""


def _agentv(ws: Workspace, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200", **env}
    environ.pop("OPENAI_API_KEY", None)
    environ.update(env)
    return subprocess.run(
        [PY, "-m", "agentv_py", *args], cwd=ws.root, capture_output=True, text=True, timeout=120, env=environ
    )


def _leaks(text: str, *secrets: str) -> list[str]:
    """Every way `text` shows one of `secrets`: whole, JSON-escaped, URL-encoded, base64, or a long
    enough start or end of one (a cut quote)."""
    found = []
    for secret in secrets:
        for form in secret_forms(secret):
            if form in text:
                found.append(form)
        for cut in (secret[:10], secret[-10:], json.dumps(secret)[1:11], json.dumps(secret)[-11:-1]):
            if cut in text:
                found.append(cut)
    return found


def _auth_echo(request: Recorded) -> Reply:
    """The judge: echoes the Authorization header it received in hits, reasoning, details (a key)."""
    auth = request.headers.get("authorization", "")
    answer = request.body["messages"][-1]["content"]
    reply = {"score": 0.5, "hits": [auth], "misses": [answer], "reasoning": f"you sent {auth}", "details": {auth: auth}}
    return text(json.dumps(reply))


@pytest.fixture
def leaky_cli_run(ws: Workspace, chat_server: ChatServer) -> tuple[subprocess.CompletedProcess[str], Path]:
    chat_server.request_responder = _auth_echo
    ws.targets(f"""
        targets:
          - name: t
            provider: cli
            command_template: "{PY} {{FILES}} ${{{{ AGENTV_TEST_SECRET }}}}"
            env: {{TOKEN: "${{{{ AGENTV_TEST_SECRET }}}}", TOKEN2: "${{{{ AGENTV_TEST_SECRET_2 }}}}"}}
            judge_target: judge
          - name: judge
            provider: openai
            model: judge-model
            base_url: {chat_server.base_url}
            api_key: ${{{{ AGENTV_TEST_SECRET }}}}
            max_retries: 0
    """)
    ws.file("judges/leaky.py", LEAKY_JUDGE)
    ws.file("judges/failing.py", FAILING_JUDGE)
    ws.file("judges/bad_score.py", BAD_SCORE_JUDGE)
    ws.file("judges/q.md", "Answer: {{output}}\n")
    cases = ["json", "text", "crash", "long-stderr"]
    for case in cases:
        ws.file(f"fx/case_{case}.py", TARGET_SCRIPT.replace("{CASE}", case))
    case_yaml = "".join(
        f"""
          - id: {case}
            input_messages: [{{role: user, content: [{{type: file, value: fx/case_{case}.py}}]}}]
            expected_messages: [{{role: assistant, content: {{a: expected-a, b: expected-b}}}}]"""
        for case in cases
    )
    ws.dataset(
        f"""
        execution:
          target: t
          evaluators:
            - {{type: field_accuracy, fields: [{{path: a}}, {{path: b}}]}}
            - {{name: leaky, type: code_judge, script: [{PY}, judges/leaky.py]}}
            - {{name: failing, type: code_judge, script: [{PY}, judges/failing.py]}}
            - {{name: bad_score, type: code_judge, script: [{PY}, judges/bad_score.py]}}
            - {{name: quality, type: llm_judge, prompt: judges/q.md}}
        evalcases:{case_yaml}
        """
    )
    result = _agentv(
        ws,
        "eval",
        "dataset.yaml",
        "--out",
        "o.jsonl",
        "--verbose",
        "--max-retries",
        "0",
        AGENTV_TEST_SECRET=SECRET,
        AGENTV_TEST_SECRET_2=SECRET_2,
    )
    return result, ws.root / "o.jsonl"


def test_no_secret_in_the_results_file_stdout_or_stderr(leaky_cli_run):
    result, out = leaky_cli_run
    assert result.returncode == 4, result.stderr
    written = out.read_text(encoding="utf-8")
    assert _leaks(written, SECRET, SECRET_2) == []
    assert _leaks(result.stdout, SECRET, SECRET_2) == []
    assert _leaks(result.stderr, SECRET, SECRET_2) == []
    assert MASK in result.stdout + result.stderr  # the verbose summary shows masked misses


def test_every_echo_is_in_the_row_masked(leaky_cli_run):
    result, out = leaky_cli_run
    rows = {row["eval_id"]: row for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert set(rows) == {"json", "text", "crash", "long-stderr"}
    json_row, text_row = rows["json"], rows["text"]
    # the target's answer: the secret inside JSON text (JSON-escaped) and as plain text
    assert json.loads(json_row["candidate_answer"]) == {"a": MASK, "b": MASK, "c": MASK}
    assert text_row["candidate_answer"] == f"The key is {MASK} and the password {MASK}\n"
    by_name = {r["name"]: r for r in json_row["evaluator_results"]}
    # a code judge: hits, misses, reasoning, and details at depth, dict keys included
    leaky = by_name["leaky"]
    assert (leaky["hits"], leaky["misses"], leaky["reasoning"]) == ([f"saw {MASK}"], [MASK], f"the secret is {MASK}")
    assert leaky["details"][MASK] == {"nested": [{f"deep {MASK}": MASK}], "answer": json_row["candidate_answer"]}
    assert leaky["details"]["plain"] == MASK
    # a failing judge's stderr tail, and a bad value quoted in the contract message
    assert by_name["failing"]["reasoning"] == (
        f"code_judge 'failing': exited with code 2 (0 or 1 with a JSON result expected) "
        f"(stderr: judge crashed holding {MASK})"
    )
    assert by_name["bad_score"]["status"] == "error" and MASK in by_name["bad_score"]["reasoning"]
    # the model judge echoing the Authorization header (in a details key too)
    quality = by_name["quality"]
    assert quality["hits"] == [f"Bearer {MASK}"] and quality["reasoning"] == f"you sent Bearer {MASK}"
    assert quality["details"][f"Bearer {MASK}"] == f"Bearer {MASK}"
    # the crashing target: the error and its stderr tail, whole or cut
    assert rows["crash"]["status"] == "error" and rows["crash"]["error"].endswith(
        f"fatal: the server refused key {MASK}"
    )
    assert rows["long-stderr"]["status"] == "error" and rows["long-stderr"]["error"].endswith(f"{MASK}yyyyyyyyyy")


def test_the_default_openai_key_is_masked_in_answers_and_errors(ws, chat_server):
    def echo(request: Recorded) -> Reply:
        auth = request.headers.get("authorization", "")
        if "fail" in json.dumps(request.body):
            return error(401, f"invalid key {auth}")
        return text(f"you called me with {auth} ({base64.b64encode(('me:' + OPENAI_KEY).encode()).decode()})")

    chat_server.request_responder = echo
    ws.targets(f"""
        targets:
          - name: model
            provider: openai
            model: answer-model
            base_url: {chat_server.base_url}
            max_retries: 0
    """)
    ws.dataset("""
        execution:
          target: model
          evaluators: [{type: field_accuracy, fields: [{path: a}]}]
        evalcases:
          - id: ok
            input_messages: [{role: user, content: answer please}]
            expected_messages: [{role: assistant, content: {a: 1}}]
          - id: bad
            input_messages: [{role: user, content: fail please}]
            expected_messages: [{role: assistant, content: {a: 1}}]
    """)
    result = _agentv(ws, "eval", "dataset.yaml", "--out", "o.jsonl", "--verbose", OPENAI_API_KEY=OPENAI_KEY)
    assert len(chat_server.requests) >= 2
    assert {r.headers["authorization"] for r in chat_server.requests} == {f"Bearer {OPENAI_KEY}"}
    written = (ws.root / "o.jsonl").read_text(encoding="utf-8")
    assert _leaks(written + result.stdout + result.stderr, OPENAI_KEY) == []
    rows = {row["eval_id"]: row for row in map(json.loads, written.splitlines())}
    assert rows["ok"]["candidate_answer"].startswith(f"you called me with Bearer {MASK} (bWU6")
    assert rows["bad"]["error"].endswith(f"invalid key Bearer {MASK}")


def test_a_substituted_target_that_is_invalid_never_quotes_the_value(ws):
    ws.dataset("""
        execution:
          target: t
          evaluators: [{type: field_accuracy, fields: [{path: a}]}]
        evalcases:
          - id: c1
            input_messages: [{role: user, content: hi}]
            expected_messages: [{role: assistant, content: {a: 1}}]
    """)
    ws.cli_target("echo ${{ AGENTV_TEST_SECRET }}")
    # a reason that shows the whole value: the value is masked
    result = _agentv(ws, "eval", "dataset.yaml", AGENTV_TEST_SECRET="{BAD_PLACEHOLDER}")
    assert result.returncode == 2
    assert result.stderr.splitlines()[1] == (
        "  .agentv/targets.yaml:4: targets[0].command_template: unknown placeholder *** in command_template. "
        "Valid placeholders: {PROMPT}, {PROMPT_FILE}, {FILES}, {IMAGES}, {OUTPUT_FILE}, {EVAL_ID}, "
        "{GUIDELINES}, {ATTEMPT} "
        "(after substituting ${{ AGENTV_TEST_SECRET }})"
    )
    # a reason that shows part of the value: withheld
    result = _agentv(ws, "eval", "dataset.yaml", AGENTV_TEST_SECRET="sk-live-{ABCDEFGHIJKL}-tail")
    assert result.returncode == 2
    assert result.stderr.splitlines()[1] == (
        "  .agentv/targets.yaml:4: targets[0].command_template: not valid after substituting "
        "${{ AGENTV_TEST_SECRET }} (the reason is not shown: it quotes the value)"
    )
    assert "ABCDEFGH" not in result.stdout + result.stderr


# The redactor itself


def test_forms_of_a_secret_are_masked():
    redact = Redactor([SECRET_2, SECRET])
    assert redact(f"a {SECRET} b") == f"a {MASK} b"
    assert redact(json.dumps({"k": SECRET_2})) == f'{{"k": "{MASK}"}}'
    assert redact(json.dumps({"k": SECRET_2}, ensure_ascii=False)) == f'{{"k": "{MASK}"}}'
    assert redact("https://x/?key=pw-%22quoted%22%5Cslash%2F%C3%BCn%C3%AF-98765&z=1") == f"https://x/?key={MASK}&z=1"
    basic = base64.b64encode(f"user:{SECRET}".encode()).decode()
    assert SECRET not in redact(basic) and MASK in redact(basic)
    assert not _leaks(redact(base64.urlsafe_b64encode(f"ab:{SECRET}".encode()).decode()), SECRET)


def test_cut_secrets_are_masked_at_either_end():
    redact = Redactor([SECRET])
    assert redact("(stderr: ..." + SECRET[7:] + " | done)") == f"(stderr: ...{MASK} | done)"
    assert redact('got "' + SECRET[:15] + "...") == f'got "{MASK}...'
    # 8 characters of a secret's start or end count: shorter shared stretches are left alone, while
    # another key with the same 8-character prefix loses that prefix (harmless over-masking)
    assert redact("prefix sk-live_other") == "prefix sk-live_other"
    assert redact("prefix sk-live-other") == f"prefix {MASK}other"


def test_short_values_are_not_masked():
    # 1-3 characters are not credentials; masking them would rewrite every answer and score
    assert Redactor(["1", "on", "eu1"])("score 1 on eu1") == "score 1 on eu1"
    assert not Redactor(["abc"]).active
    assert Redactor(["abcd"])("xabcdx") == f"x{MASK}x"


def test_data_masks_strings_and_keys_at_any_depth_without_copying_clean_data():
    redact = Redactor([SECRET])
    clean: dict[str, Any] = {"a": [1, 2.5, None, True, {"b": "c"}]}
    assert redact.data(clean) is clean
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):  # deeper than Python's recursion limit
        node["k"] = {}
        node = node["k"]
    node[SECRET] = [SECRET, ("t", SECRET)]
    masked = redact.data(deep)
    node = masked
    for _ in range(5000):
        node = node["k"]
    assert node == {MASK: [MASK, ["t", MASK]]}
    assert list(redact.data({f"x{SECRET}": 1, "x***": 2, f"x{SECRET}-": 3})) == ["x*** (2)", "x***", "x***-"]


def test_the_input_data_is_never_modified():
    redact = Redactor([SECRET])
    data = {"k": [SECRET], SECRET: 1}
    redact.data(data)
    assert data == {"k": [SECRET], SECRET: 1}


def test_run_masks_every_row_and_the_keys_it_sends(ws, monkeypatch):
    """The library path (no CLI): rows handed to `on_row` are masked, $OPENAI_API_KEY included."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    path = ws.cases_dataset([("c1", f'echo \'{{"a": "{SECRET}", "b": "{OPENAI_KEY}"}}\'', {"a": 1})])
    dataset = load_dataset(path)
    judge = OpenAITarget(name="j", provider="openai", model="m", base_url="http://127.0.0.1:9/v1")
    target = CliTarget(name="t", provider="cli", command_template="sh {FILES}")
    assert sent_keys([target, judge]) == [OPENAI_KEY]
    rows: list[ResultRow] = []
    with Run(dataset, dataset.cases, target, judges={"j": judge}, secrets=[SECRET]) as run:
        run.execute(rows.append)
    [row] = rows
    assert row.candidate_answer == f'{{"a": "{MASK}", "b": "{MASK}"}}\n'
    assert not _leaks(row.model_dump_json(), SECRET, OPENAI_KEY)


def test_without_secrets_rows_are_handed_over_untouched(ws):
    dataset = load_dataset(ws.cases_dataset([("c1", '{"a": 1}', {"a": 1})]))
    target = CliTarget(name="t", provider="cli", command_template="cat {FILES}")
    with Run(dataset, dataset.cases, target) as run:
        row = ResultRow(timestamp="t", eval_id="c1", dataset="d", target="t", status="ok", score=1.0, verdict="pass")
        assert not run.redact.active and run.redacted(row) is row


def test_rows_round_trip_through_the_redactor():
    row = make_row(eval_id="c1", candidate_answer=f"key {SECRET}")
    masked = Redactor([SECRET]).data(row.model_dump())
    assert ResultRow.model_validate(masked).candidate_answer == f"key {MASK}"


@pytest.mark.parametrize(
    "value",
    [
        {"a": SECRET_2},
        {"a": json.dumps(SECRET_2)},  # JSON text inside a string: escaped twice in the row's JSON
        {"a": json.dumps(SECRET_2, ensure_ascii=False)},
        {f"k{SECRET}": 1},
        ["..." + SECRET[5:]],
        [SECRET_2[:10] + "..."],
        [base64.b64encode(f"u:{SECRET}".encode()).decode()],
        {"a": "nothing to see", "b": [1, 2.5, None]},
    ],
)
def test_the_fast_json_check_agrees_with_the_walk(value):
    redact = Redactor([SECRET, SECRET_2])
    assert redact.in_json(json.dumps(value, ensure_ascii=False)) == (redact.data(value) is not value)


def test_a_row_json_cannot_hold_is_still_masked(ws):
    """A lone surrogate makes pydantic refuse the fast JSON check: the row is walked instead."""
    dataset = load_dataset(ws.cases_dataset([("c1", '{"a": 1}', {"a": 1})]))
    target = CliTarget(name="t", provider="cli", command_template="cat {FILES}")
    with Run(dataset, dataset.cases, target, secrets=[SECRET]) as run:
        row = make_row(eval_id="c1", candidate_answer=f"\ud800 {SECRET}")
        assert run.redacted(row).candidate_answer == f"\ud800 {MASK}"


def test_a_secret_spelled_like_a_verdict_leaves_verdicts_alone(ws):
    """`status` and `verdict` are agentv's own closed vocabularies, not data: never masked."""
    dataset = load_dataset(ws.cases_dataset([("c1", '{"a": "pass"}', {"a": "pass"})], fields="[{path: a}]"))
    target = CliTarget(name="t", provider="cli", command_template="cat {FILES}")
    rows: list[ResultRow] = []
    with Run(dataset, dataset.cases, target, secrets=["pass"]) as run:
        run.execute(rows.append)
    [row] = rows
    assert (row.status, row.verdict, row.evaluator_results[0].verdict) == ("ok", "pass", "pass")
    assert row.candidate_answer == f'{{"a": "{MASK}"}}'


# Pre-run errors: the checks before any case runs quote the command, its program and its cwd


def _pre_run_refusal(ws: Workspace, command: str, extra: str = "") -> list[str]:
    """`agentv eval` with a cli target `command` (+ `extra` YAML) whose `${{ AGENTV_TEST_SECRET }}`
    is SECRET: refused (exit 2) before any case runs; stderr's lines, with no form of SECRET in
    stdout or stderr."""
    ws.cases_dataset([("c1", "{}", {"a": 1})])
    ws.cli_target(command, extra=extra)
    result = _agentv(ws, "eval", "dataset.yaml", "--out", "o.jsonl", AGENTV_TEST_SECRET=SECRET)
    assert result.returncode == 2, result.stderr
    assert not _leaks(result.stdout + result.stderr, SECRET)
    assert not (ws.root / "o.jsonl").exists() or (ws.root / "o.jsonl").read_text() == ""
    return result.stderr.splitlines()


def test_a_failing_healthcheck_never_shows_the_secret_in_its_command(ws):
    # Like `curl -H 'Authorization: Bearer …'` against a server that is down: the secret is in the
    # command, and the check echoes it on stderr before failing.
    check = "sh -c 'echo auth Bearer ${{ AGENTV_TEST_SECRET }} refused >&2; exit 7'"
    lines = _pre_run_refusal(ws, "cat {FILES}", extra=f"healthcheck:\n  command_template: {json.dumps(check)}")
    assert lines == [
        f"error: healthcheck of target 't' failed: exit code 7: auth Bearer {MASK} refused",
        f"hint: the healthcheck runs `sh -c 'echo auth Bearer {MASK} refused >&2; exit 7'` in {ws.root}",
    ]


def test_a_missing_cwd_never_shows_the_secret_in_its_path(ws):
    lines = _pre_run_refusal(ws, "cat {FILES}", extra='cwd: "/x/${{ AGENTV_TEST_SECRET }}"')
    assert lines == [
        f"error: target 't' cannot start: its cwd is not a directory: /x/{MASK}",
        f"hint: the target runs `cat {{FILES}}` in /x/{MASK}",
    ]


def test_a_secret_program_name_is_never_shown(ws):
    lines = _pre_run_refusal(ws, "${{ AGENTV_TEST_SECRET }} {FILES}")
    assert lines == [
        f"error: target 't' cannot start: command not found: {MASK} (not on PATH)",
        f"hint: the target runs `{MASK} {{FILES}}` in {ws.root}",
    ]
