"""The answer cache (`agentv eval --cache`): real SQLite, real subprocess targets that count their
own calls, a real chat server for judges. What each key holds, what misses, what is never
cached, and every way the database can be unusable."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentv_py.chat import ChatMessage
from agentv_py.models.model_targets import OpenAITarget
from agentv_py.models.targets import CliTarget
from agentv_py.runner.cache import decode_outcome, decode_reply
from agentv_py.runner.cache_keys import (
    KEY_VERSION,
    FileDigests,
    chat_key,
    inherited_environment,
    key_of,
    target_identity,
)
from agentv_py.runner.cache_store import CacheStore
from tests.chat_server import text
from tests.cli.test_eval import invoke, rows
from tests.conftest import REPO_ROOT

# Appends a line to the counter file (argv[1]) per call; answers with its input file's content,
# or fails when that content is "fail".
EXTRACT = """\
import pathlib, sys
counter, path = sys.argv[1], sys.argv[2]
with open(counter, "a") as handle:
    handle.write("call\\n")
value = pathlib.Path(path).read_text().strip()
if value == "fail":
    sys.exit("no answer for this input")
print('{"total": "%s"}' % value)
"""

DATASET = """\
execution:
  target: t
  {cache}
  evaluators:
    - {{type: field_accuracy, fields: [{{path: total}}]}}
evalcases:
  - id: a
    input_messages: [{{role: user, content: [{{type: file, value: a.txt}}]}}]
    expected_messages: [{{role: assistant, content: {{total: "12"}}}}]
  - id: b
    input_messages: [{{role: user, content: [{{type: file, value: b.txt}}]}}]
    expected_messages: [{{role: assistant, content: {{total: "13"}}}}]
"""

DB = Path(".agentv/cache/cache.sqlite3")


class Project:
    """A project with `scripts/extract.py` (the target's program), `evals/d.yaml` and its inputs;
    the counter file lives outside the project."""

    def __init__(self, ws, counter: Path) -> None:
        self.ws = ws
        self.counter = counter
        ws.file("scripts/extract.py", EXTRACT)
        ws.file("evals/a.txt", "12\n")
        ws.file("evals/b.txt", "13\n")
        self.dataset()
        self.target()

    def dataset(self, cache: str = "") -> None:
        self.ws.file("evals/d.yaml", DATASET.format(cache=cache))

    def target(self, extra: str = "") -> None:
        command = f"{sys.executable} ../scripts/extract.py {self.counter} {{FILES}}"
        self.ws.cli_target(command, extra=extra)

    @property
    def calls(self) -> int:
        return len(self.counter.read_text().splitlines()) if self.counter.exists() else 0

    def run(self, *args: str, out: str = "o.jsonl", code: int | None = 0) -> tuple[list[dict], str]:
        """`agentv eval evals/d.yaml ARGS`: the rows and stderr; asserts the exit code."""
        result = invoke("eval", "evals/d.yaml", "--out", out, *args)
        if code is not None:
            assert result.exit_code == code, result.output
        return sorted(rows(out), key=lambda row: row["eval_id"]), result.stderr


@pytest.fixture
def project(ws, tmp_path_factory):
    return Project(ws, tmp_path_factory.mktemp("counter") / "calls")


def scores(found: list[dict]) -> list[tuple[str, float, str]]:
    return [(row["eval_id"], row["score"], row["verdict"]) for row in found]


def test_a_warm_run_calls_nothing_and_scores_the_same(project):
    cold, _ = project.run("--cache")
    assert project.calls == 2
    assert [row["trace"]["cache"] for row in cold] == ["miss", "miss"]
    warm, stderr = project.run("--cache", out="warm.jsonl")
    assert project.calls == 2  # no call at all
    assert [row["trace"]["cache"] for row in warm] == ["hit", "hit"]
    assert scores(warm) == scores(cold) == [("a", 1.0, "pass"), ("b", 1.0, "pass")]
    assert [row["candidate_answer"] for row in warm] == [row["candidate_answer"] for row in cold]
    assert "warning" not in stderr


def test_without_the_cache_rows_say_nothing_about_it(project):
    found, _ = project.run()
    assert all("cache" not in row["trace"] for row in found)
    assert not DB.exists()


@pytest.mark.parametrize(
    ("change", "calls"),
    [
        pytest.param(lambda p: p.ws.file("evals/b.txt", "14\n"), 1, id="input-file-content"),
        pytest.param(lambda p: p.ws.file("scripts/extract.py", EXTRACT + "# v2\n"), 2, id="script-content"),
        pytest.param(lambda p: p.target("cache_key: model-2026-01"), 2, id="cache_key"),
        pytest.param(lambda p: p.target("env: {MODE: strict}"), 2, id="target-config"),
        pytest.param(lambda p: p.target("files_format: '{path} {basename}'"), 2, id="rendered-command"),
    ],
)
def test_a_change_the_answer_depends_on_misses(project, change, calls):
    project.run("--cache")
    change(project)
    project.run("--cache", code=None)
    assert project.calls == 2 + calls


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda p: p.target("timeout_seconds: 99"), id="timeout"),
        pytest.param(lambda p: p.target("cache: true"), id="the-cache-switch"),
        pytest.param(lambda p: p.ws.file("evals/moved.txt", "12\n"), id="an-unrelated-file"),
    ],
)
def test_what_cannot_change_the_answer_still_hits(project, change):
    project.run("--cache")
    change(project)
    found, _ = project.run("--cache")
    assert project.calls == 2 and [row["trace"]["cache"] for row in found] == ["hit", "hit"]


def test_a_moved_project_hits(project, tmp_path_factory, monkeypatch):
    """Keys hold content hashes and project-relative words, not absolute paths: the project
    copied elsewhere (its cache with it) reuses every answer."""
    project.run("--cache")
    moved = tmp_path_factory.mktemp("moved") / "project"
    shutil.copytree(project.ws.root, moved)
    monkeypatch.chdir(moved)
    found, _ = project.run("--cache")
    assert project.calls == 2 and [row["trace"]["cache"] for row in found] == ["hit", "hit"]


def test_errors_are_never_cached(project):
    project.ws.file("evals/b.txt", "fail\n")
    first, _ = project.run("--cache", "--max-retries", "0", code=4)
    assert first[1]["error"].startswith("target 't' failed: exit code 1: no answer for this input")
    second, _ = project.run("--cache", "--max-retries", "0", code=4)
    assert project.calls == 3  # a hit; b asked again
    assert [row["trace"]["cache"] for row in second] == ["hit", "miss"]


def test_an_answer_holding_a_secret_is_never_written(project, monkeypatch):
    monkeypatch.setenv("MY_TOKEN", "tok-SECRET-98765")
    project.target("env: {TOKEN: '${{ MY_TOKEN }}'}")
    project.ws.file("evals/a.txt", "tok-SECRET-98765\n")  # the target echoes it back
    first, _ = project.run("--cache", code=1)
    assert first[0]["candidate_answer"] == '{"total": "***"}\n'
    second, _ = project.run("--cache", code=1)
    assert project.calls == 3  # a asked again, b from the cache
    assert [row["trace"]["cache"] for row in second] == ["miss", "hit"]
    assert b"SECRET" not in DB.read_bytes()


@pytest.mark.parametrize(
    ("dataset_cache", "target_extra", "args", "cached"),
    [
        pytest.param("cache: true", "", (), True, id="execution.cache"),
        pytest.param("", "cache: true", (), True, id="target-cache"),
        pytest.param("cache: true", "", ("--no-cache",), False, id="no-cache-wins-over-the-dataset"),
        pytest.param("", "cache: true", ("--no-cache",), False, id="no-cache-wins-over-the-target"),
        pytest.param("", "", (), False, id="off-by-default"),
    ],
)
def test_what_turns_the_cache_on(project, dataset_cache, target_extra, args, cached):
    project.dataset(dataset_cache)
    project.target(target_extra)
    project.run(*args)
    found, _ = project.run(*args)
    assert project.calls == (2 if cached else 4)
    assert [row["trace"].get("cache") for row in found] == (["hit", "hit"] if cached else [None, None])


def test_a_batching_target_is_not_cached_and_the_run_says_so(project):
    batch = REPO_ROOT / "tests" / "fixtures" / "targets" / "batch_answers.py"
    command = f"{sys.executable} {batch} {project.counter} ok {{EVAL_ID}} {{OUTPUT_FILE}} {{FILES}}"
    project.ws.cli_target(command, extra="provider_batching: true")
    found, stderr = project.run("--cache", code=None)
    assert "warning: cache: target 't' answers every case in one batch: not cached" in stderr.splitlines()
    assert all("cache" not in row["trace"] for row in found)


def test_cache_dir_chooses_where(project):
    project.run("--cache", "--cache-dir", "elsewhere")
    assert Path("elsewhere/cache.sqlite3").is_file() and not DB.exists()
    project.run("--cache", "--cache-dir", "elsewhere")
    assert project.calls == 2


def test_two_agentv_processes_write_one_cache_at_once(project, monkeypatch):
    many = "\n".join(
        f"  - id: c{i}\n    input_messages: [{{role: user, content: [{{type: file, value: f{i}.txt}}]}}]\n"
        f'    expected_messages: [{{role: assistant, content: {{total: "{i}"}}}}]'
        for i in range(24)
    )
    for i in range(24):
        project.ws.file(f"evals/f{i}.txt", f"{i}\n")
    head = DATASET.format(cache="cache: true").split("evalcases:")[0]
    project.ws.file("evals/d.yaml", head + "evalcases:\n" + many + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    argv = [sys.executable, "-m", "agentv_py", "eval", "evals/d.yaml", "--workers", "8"]
    processes = [
        subprocess.Popen([*argv, "--out", f"p{n}.jsonl"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for n in range(2)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr.decode()
        assert b"warning" not in stderr, stderr.decode()
    assert 24 <= project.calls <= 48  # each case answered at least once, by either process
    with sqlite3.connect(DB) as connection:
        assert connection.execute("SELECT COUNT(*) FROM entries WHERE kind = 'target'").fetchone() == (24,)
    before = project.calls
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])  # the same environment: the same keys
    found, _ = project.run()
    assert project.calls == before and {row["trace"]["cache"] for row in found} == {"hit"}


def test_a_corrupt_database_is_not_used_and_the_run_says_so_once(project):
    project.ws.file(str(DB), b"this is not a database" * 100)
    found, stderr = project.run("--cache")
    assert project.calls == 2
    assert all("cache" not in row["trace"] for row in found)
    warnings = [line for line in stderr.splitlines() if line.startswith("warning:")]
    # ours around it; in the parentheses first, SQLite's own words for what is wrong
    said = re.escape(f"warning: cache disabled: {Path.cwd() / DB} is not a usable SQLite database (") + ".+"
    said += re.escape("; remove it to start a new cache); running without it")
    assert len(warnings) == 1 and re.fullmatch(said, warnings[0]), warnings
    assert DB.read_bytes() == b"this is not a database" * 100  # left alone


def test_a_cache_directory_that_cannot_be_made_runs_without_the_cache(project):
    project.ws.file("blocked", "a file where the directory should be")
    found, stderr = project.run("--cache", "--cache-dir", "blocked/cache")
    assert project.calls == 2 and all("cache" not in row["trace"] for row in found)
    assert (
        f"warning: cache disabled: cannot create the cache directory {Path.cwd() / 'blocked/cache'}: "
        "Not a directory; running without it"
    ) in stderr.splitlines()


def test_a_read_only_cache_directory_runs_without_the_cache(project):
    """A directory nothing may write in, whoever runs the tests: sysfs refuses new files even to
    root (a chmod 555 directory does not stop root)."""
    readonly = Path("/sys/kernel")
    assert readonly.is_dir()
    found, stderr = project.run("--cache", "--cache-dir", str(readonly))
    assert project.calls == 2 and all("cache" not in row["trace"] for row in found)
    warnings = [line for line in stderr.splitlines() if line.startswith("warning: cache disabled:")]
    assert len(warnings) == 1 and str(readonly) in warnings[0] and warnings[0].endswith("; running without it")
    assert not (readonly / "cache.sqlite3").exists()


def test_a_stored_value_that_does_not_parse_is_a_miss_and_is_replaced(project):
    project.run("--cache")
    with sqlite3.connect(DB) as connection:
        connection.execute("UPDATE entries SET value = '{not json' WHERE kind = 'target'")
    found, stderr = project.run("--cache")
    assert project.calls == 4 and [row["trace"]["cache"] for row in found] == ["miss", "miss"]
    assert "warning" not in stderr
    project.run("--cache")
    assert project.calls == 4  # the misses stored good values again


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("{not json", id="not-json"),
        pytest.param("[1, 2]", id="not-an-object"),
        pytest.param('{"format": 2, "answer": "x", "trace": {}}', id="another-format"),
        pytest.param('{"format": 1, "answer": null, "trace": {}}', id="no-answer"),
        pytest.param('{"format": 1, "answer": "x", "trace": []}', id="trace-not-an-object"),
        pytest.param('{"format": 1, "answer": "x", "trace": {}, "output_messages": "m"}', id="messages-not-a-list"),
    ],
)
def test_values_that_are_not_outcomes_are_misses(value):
    assert decode_outcome(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param('{"format": 1, "text": "hi", "model": "m"}', ("hi", "m"), id="a-reply"),
        pytest.param('{"format": 1, "text": null, "model": "m"}', None, id="no-text"),
        pytest.param('{"format": 1, "text": "hi", "model": 3}', None, id="model-not-text"),
        pytest.param("nonsense", None, id="not-json"),
    ],
)
def test_stored_replies_decode_or_miss(value, expected):
    reply = decode_reply(value)
    assert (None if reply is None else (reply.text, reply.model)) == expected
    if reply is not None:
        assert reply.cached and reply.attempts == 0


def test_a_locked_database_skips_that_store_and_says_so_once(tmp_path):
    notices: list[str] = []
    store = CacheStore(tmp_path, notices.append, busy_timeout=0.1)
    store.put("target", "v1:a", "A")
    holder = sqlite3.connect(tmp_path / "cache.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing
    try:
        store.put("target", "v1:b", "B")
        store.put("target", "v1:c", "C")
        assert store.get("target", "v1:a") == "A"  # WAL: readers do not wait for the writer
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.put("target", "v1:d", "D")
    assert [store.get("target", key) for key in ("v1:b", "v1:c", "v1:d")] == [None, None, "D"]
    assert store.disabled is None
    assert notices == [
        f"cache: {tmp_path / 'cache.sqlite3'} stayed locked for 0.1s: a store was skipped (later ones are tried again)"
    ]
    store.close()


def test_one_store_many_threads(tmp_path):
    store = CacheStore(tmp_path)

    def work(n: int) -> None:
        for i in range(50):
            store.put("judge", f"v1:{n}-{i}", str(i))
            assert store.get("judge", f"v1:{n}-{i}") == str(i)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()
    with sqlite3.connect(tmp_path / "cache.sqlite3") as connection:
        assert connection.execute("SELECT COUNT(*), SUM(hits) FROM entries").fetchone() == (300, 300)
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_database_of_another_layout_is_not_used(tmp_path):
    with sqlite3.connect(tmp_path / "cache.sqlite3") as connection:
        connection.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.execute("INSERT INTO meta VALUES ('schema', '99')")
    notices: list[str] = []
    store = CacheStore(tmp_path, notices.append)
    assert store.get("target", "v1:x") is None
    assert notices == [
        f"cache disabled: {tmp_path / 'cache.sqlite3'} has layout 99, this agentv reads layout 1 "
        "(`agentv cache clear` starts a new one); running without it"
    ]


# -- keys ---------------------------------------------------------------------------------------

OPENAI = {"name": "m", "provider": "openai", "model": "gpt-x", "api_key": "sk-secret"}


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        pytest.param(OPENAI, {**OPENAI, "api_key": "sk-other"}, True, id="api-key-left-out"),
        pytest.param(OPENAI, {**OPENAI, "name": "renamed"}, True, id="name-left-out"),
        pytest.param(OPENAI, {**OPENAI, "max_retries": 9, "timeout_seconds": 5}, True, id="retries-and-timeout"),
        pytest.param(
            {**OPENAI, "headers": {"Authorization": "Bearer a"}},
            {**OPENAI, "headers": {"Authorization": "Bearer b"}},
            True,
            id="auth-header-left-out",
        ),
        pytest.param(OPENAI, {**OPENAI, "model": "gpt-y"}, False, id="model"),
        pytest.param(OPENAI, {**OPENAI, "temperature": 0.5}, False, id="temperature"),
        pytest.param(OPENAI, {**OPENAI, "system_prompt": "be brief"}, False, id="system-prompt"),
        pytest.param(OPENAI, {**OPENAI, "cache_key": "2026-01"}, False, id="cache_key"),
        pytest.param(
            {**OPENAI, "headers": {"X-Api-Version": "1"}},
            {**OPENAI, "headers": {"X-Api-Version": "2"}},
            False,
            id="other-header",
        ),
    ],
)
def test_model_target_identity(left, right, same):
    a, b = OpenAITarget.model_validate(left), OpenAITarget.model_validate(right)
    assert (target_identity(a) == target_identity(b)) is same
    assert "sk-secret" not in json.dumps(target_identity(a))


def test_chat_keys_hold_image_content_not_paths(tmp_path):
    from agentv_py.media import ImageRef

    one, two = tmp_path / "one.png", tmp_path / "two.png"
    one.write_bytes(b"\x89PNG same")
    two.write_bytes(b"\x89PNG same")
    config = OpenAITarget.model_validate(OPENAI)

    def key(path: Path) -> str | None:
        message = ChatMessage("user", ["look", ImageRef("file", str(path), "image/png")])
        return chat_key(config, {}, [message], FileDigests())

    first = key(one)
    assert first is not None and first.startswith(f"v{KEY_VERSION}:")
    assert key(two) == first
    two.write_bytes(b"\x89PNG other")
    assert key(two) != first
    assert key(tmp_path / "missing.png") is None  # unreadable: no key, the call reports it


def test_keys_are_versioned_and_kinds_apart():
    assert key_of("target", {"x": 1}) != key_of("judge", {"x": 1})
    assert key_of("target", {"x": 1}).startswith(f"v{KEY_VERSION}:")


def test_cli_identity_keeps_what_changes_the_answer():
    config = CliTarget.model_validate(
        {"name": "t", "provider": "cli", "command_template": "x {FILES}", "env": {"A": "1"}, "timeout_seconds": 3}
    )
    identity = target_identity(config)
    assert identity["command_template"] == "x {FILES}" and identity["env"] == {"A": "1"}
    assert "timeout_seconds" not in identity and "name" not in identity


# -- judges -------------------------------------------------------------------------------------

VALID = json.dumps({"score": 0.9, "hits": ["right"], "reasoning": "ok"})


@pytest.fixture
def judged(project, chat_server, monkeypatch):
    """The project's cli target, judged by an OpenAI-compatible judge on the local chat server."""
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-SECRET-1")
    command = f"{sys.executable} ../scripts/extract.py {project.counter} {{FILES}}"
    project.ws.targets(f"""
        targets:
          - name: t
            provider: cli
            command_template: {json.dumps(command)}
          - name: judge
            provider: openai
            model: judge-model
            base_url: {chat_server.base_url}
            api_key: ${{{{ JUDGE_KEY }}}}
            max_retries: 0
    """)
    project.ws.file("evals/judges/q.md", "Question: {{input}}\nAnswer: {{output}}\n")
    project.ws.file(
        "evals/d.yaml",
        DATASET.format(cache="judge_target: judge").replace(
            "{type: field_accuracy, fields: [{path: total}]}", "{type: llm_judge, name: quality, prompt: judges/q.md}"
        ),
    )
    return project


def judge_details(found: list[dict]) -> list[dict]:
    return [row["evaluator_results"][0]["details"]["judge"] for row in found]


def test_judge_replies_are_reused_and_say_so(judged, chat_server):
    chat_server.default = text(VALID)
    cold, _ = judged.run("--cache")
    assert len(chat_server.requests) == 2
    assert all("cached" not in details for details in judge_details(cold))
    warm, _ = judged.run("--cache")
    assert len(chat_server.requests) == 2  # no judge request at all
    assert all(details["cached"] is True and details["http_attempts"] == 0 for details in judge_details(warm))
    assert scores(warm) == scores(cold)
    assert [row["evaluator_results"][0]["reasoning"] for row in warm] == ["ok", "ok"]


def test_a_changed_prompt_asks_the_judge_again(judged, chat_server):
    chat_server.default = text(VALID)
    judged.run("--cache")
    judged.ws.file("evals/judges/q.md", "Q: {{input}}\nA: {{output}}\n")
    judged.run("--cache")
    assert len(chat_server.requests) == 4


def test_an_invalid_reply_is_never_stored(judged, chat_server):
    chat_server.responder = None
    chat_server.default = text(VALID)
    chat_server.reply(text("not json at all"))  # the first request gets it, then asks again
    judged.run("--cache", "--workers", "1")
    assert len(chat_server.requests) == 3
    judged.run("--cache", "--workers", "1")
    # the first question of the invalid exchange was never stored: asked once more
    assert len(chat_server.requests) == 4
    judged.run("--cache", "--workers", "1")
    assert len(chat_server.requests) == 4


def test_a_stored_reply_that_no_longer_validates_is_forgotten_and_asked_again(judged, chat_server):
    chat_server.default = text(VALID)
    judged.run("--cache")
    with sqlite3.connect(DB) as connection:
        connection.execute(
            "UPDATE entries SET value = ? WHERE kind = 'judge'",
            (json.dumps({"format": 1, "text": '{"score": 7}', "model": "judge-model"}),),
        )
    found, _ = judged.run("--cache")
    assert len(chat_server.requests) == 4  # each case asked once afresh, no correction turn
    assert all(len(request.body["messages"]) == 2 for request in chat_server.requests[2:])
    assert [row["score"] for row in found] == [0.9, 0.9]
    assert all("cached" not in details for details in judge_details(found))
    judged.run("--cache")
    assert len(chat_server.requests) == 4  # the fresh replies were stored


def test_a_failed_judge_call_is_not_stored(judged, chat_server):
    from tests.chat_server import error

    chat_server.reply(error(500), error(500))
    judged.run("--cache", code=4)
    chat_server.default = text(VALID)
    judged.run("--cache")
    assert len(chat_server.requests) == 4


def test_a_model_target_is_cached_whatever_its_key(project, chat_server, monkeypatch):
    project.ws.targets(f"""
        targets:
          - name: t
            provider: openai
            model: answer-model
            base_url: {chat_server.base_url}
            api_key: ${{{{ MODEL_KEY }}}}
            max_retries: 0
    """)
    chat_server.default = text('{"total": "12"}')
    monkeypatch.setenv("MODEL_KEY", "sk-one-SECRET")
    cold, _ = project.run("--cache", code=1)
    monkeypatch.setenv("MODEL_KEY", "sk-two-SECRET")  # another key: the same answers
    warm, _ = project.run("--cache", code=1)
    assert len(chat_server.requests) == 2
    assert [row["trace"]["cache"] for row in warm] == ["hit", "hit"]
    assert scores(warm) == scores(cold)
    assert warm[0]["trace"]["token_usage"] == cold[0]["trace"]["token_usage"]  # the answer's own trace
    assert b"SECRET" not in DB.read_bytes()
    project.ws.file("evals/a.txt", "99\n")  # inlined into the message: a new question
    project.run("--cache", code=1)
    assert len(chat_server.requests) == 3


def test_a_cache_others_could_write_is_not_trusted(project):
    """A planted cache could change a run's answers: a cache directory or database writable by
    group or others (or owned by another user) is not used, and the run says why."""
    project.run("--cache")
    DB.parent.chmod(0o777)
    try:
        found, stderr = project.run("--cache", out="again.jsonl")
    finally:
        DB.parent.chmod(0o755)
    assert project.calls == 4  # both cases ran again: no answer came from that cache
    said = " ".join(stderr.split())
    assert "is writable by group or others (mode 777): not trusted (chmod go-w to use it)" in said
    assert said.count("cache disabled:") == 1
    assert [row["verdict"] for row in found] == ["pass", "pass"]


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_side_file_others_could_write_makes_the_cache_untrusted(project, suffix):
    """SQLite reads a database's -wal (and -shm, -journal) with it: a planted one could hold
    answers, so it is checked like the database."""
    project.run("--cache")
    side = DB.with_name(DB.name + suffix)
    side.write_bytes(b"")
    side.chmod(0o666)
    found, stderr = project.run("--cache", out="again.jsonl")
    assert project.calls == 4  # not used: both cases ran again
    said = " ".join(stderr.split())
    assert f"{side.name} is writable by group or others (mode 666): not trusted" in said
    assert [row["verdict"] for row in found] == ["pass", "pass"]


def test_a_hit_is_scored_from_the_stored_text_the_row_shows(project):
    """An entry whose stored parse differs from its stored text (older entries kept both) is
    scored from the text: the answer the row shows is the answer scored."""
    project.run("--cache")
    with sqlite3.connect(DB) as db:
        for key, value in db.execute("SELECT key, value FROM entries WHERE kind = 'target'").fetchall():
            data = json.loads(value)
            data["parsed"] = {"total": "999"}  # a forged parse beside the true text
            db.execute("UPDATE entries SET value = ? WHERE kind = 'target' AND key = ?", (json.dumps(data), key))
    found, _ = project.run("--cache", out="warm.jsonl")
    assert project.calls == 2  # hits
    assert scores(found) == [("a", 1.0, "pass"), ("b", 1.0, "pass")]
    assert [json.loads(row["candidate_answer"]) for row in found] == [{"total": "12"}, {"total": "13"}]


def test_a_new_cache_is_made_private_whatever_the_umask(project):
    old = os.umask(0o002)  # a group-writable default, common on shared machines
    try:
        project.run("--cache")
        found, stderr = project.run("--cache", out="warm.jsonl")
    finally:
        os.umask(old)
    assert "cache disabled" not in stderr and project.calls == 2  # the second run hit
    assert (DB.parent.stat().st_mode & 0o777, DB.stat().st_mode & 0o777) == (0o700, 0o600)


@pytest.mark.parametrize(
    "template",
    [
        "sh -c '{python} ../scripts/extract.py {counter} {{FILES}}'",
        "sh -c 'cd ../scripts && {python} extract.py {counter} {{FILES}}'",
    ],
    ids=["inside-sh-c", "after-cd"],
)
def test_a_script_named_inside_a_shell_script_is_hashed(project, template):
    """The extractor named inside `sh -c '...'` (the form docs/security.md recommends), or after
    `cd dir &&`, is in the key: editing it asks again instead of serving stale answers."""
    project.ws.cli_target(template.format(python=sys.executable, counter=project.counter))
    project.run("--cache")
    found, _ = project.run("--cache", out="warm.jsonl")
    assert project.calls == 2 and [row["trace"]["cache"] for row in found] == ["hit", "hit"]
    project.ws.file("scripts/extract.py", EXTRACT + "# v2\n")
    found, stderr = project.run("--cache", out="new.jsonl")
    assert project.calls == 4 and [row["trace"]["cache"] for row in found] == ["miss", "miss"]
    assert "names no file of the project" not in stderr


def test_a_command_naming_no_project_file_is_said_once(project):
    project.ws.cli_target(f"{sys.executable} -c 'print(1)' {{FILES}}")
    _, stderr = project.run("--cache", code=None)
    said = " ".join(stderr.split())
    assert said.count("cache: target 't' names no file of the project agentv can hash") == 1
    assert "set the target's cache_key and change it with the program" in said


def test_a_rotated_secret_keeps_every_entry(project, monkeypatch):
    """A `${{ VAR }}` secret counts by where it is used, never by its value: a new token hits."""
    monkeypatch.setenv("EXTRACT_TOKEN", "token-one-0123456789")
    project.target("env: {TOKEN: '${{ EXTRACT_TOKEN }}'}")
    project.run("--cache")
    monkeypatch.setenv("EXTRACT_TOKEN", "token-two-9876543210")
    found, _ = project.run("--cache", out="warm.jsonl")
    assert project.calls == 2 and [row["trace"]["cache"] for row in found] == ["hit", "hit"]


WORKER_MODULE = """
def extract(request):
    with open(request["files"][0]) as handle:
        value = handle.read().strip()
    with open(COUNTER, "a") as counter:
        counter.write("call\\n")
    return {"total": value}
"""


def test_worker_and_python_targets_are_cached_and_their_code_is_in_the_key(project):
    project.ws.file("src/extractor/__init__.py", f"COUNTER = {str(project.counter)!r}\n" + WORKER_MODULE)
    project.ws.targets("targets:\n  - {name: t, provider: python, callable: 'extractor:extract', path: ../src}\n")
    project.run("--cache")
    found, _ = project.run("--cache", out="warm.jsonl")
    assert project.calls == 2 and [row["trace"]["cache"] for row in found] == ["hit", "hit"]
    project.ws.file("src/extractor/helpers.py", "# a new helper module of the package\n")
    found, _ = project.run("--cache", out="new.jsonl")
    assert project.calls == 4 and [row["trace"]["cache"] for row in found] == ["miss", "miss"]


def test_the_default_cache_is_the_projects_not_the_current_directorys(project, monkeypatch):
    """Run from a subdirectory: the answers land in (and come from) the project root's cache, and a
    cache someone left in the current directory is never read."""
    project.run("--cache")
    sub = project.ws.root / "evals"
    monkeypatch.chdir(sub)
    (sub / ".agentv" / "cache").mkdir(parents=True)
    result = invoke("eval", "d.yaml", "--out", "o.jsonl", "--cache")
    assert result.exit_code == 0, result.output
    assert project.calls == 2  # hits from the project root's cache
    assert not (sub / ".agentv" / "cache" / "cache.sqlite3").exists()


@pytest.mark.parametrize(
    ("variable", "first", "second", "status"),
    [
        pytest.param("EXTRACT_MODEL", "small", "large", "miss", id="a variable the program may read"),
        pytest.param("EXTRACT_API_KEY", "key-one-0123456789", "key-two-9876543210", "hit", id="a secret by name"),
        pytest.param("SHLVL", "1", "2", "hit", id="session bookkeeping"),
        pytest.param("GITHUB_RUN_ID", "101", "102", "hit", id="CI bookkeeping"),
    ],
)
def test_the_inherited_environment_is_in_the_key(project, monkeypatch, variable, first, second, status):
    """What a program reads from the environment it inherits can change its answer: a changed
    variable misses. Secrets count by name (a rotated key hits), the shell's and the CI job's own
    variables not at all."""
    monkeypatch.setenv(variable, first)
    project.run("--cache")
    monkeypatch.setenv(variable, second)
    found, _ = project.run("--cache", out="warm.jsonl")
    assert [row["trace"]["cache"] for row in found] == [status, status]
    assert len(first) < 4 or first.encode() not in DB.read_bytes()  # keys are digests: no value is stored


def test_cache_env_ignore_leaves_variables_out_of_the_key(project, monkeypatch):
    project.target("cache_env_ignore: ['BUILD_*']")
    monkeypatch.setenv("BUILD_NUMBER", "7")
    project.run("--cache")
    monkeypatch.setenv("BUILD_NUMBER", "8")
    found, _ = project.run("--cache", out="warm.jsonl")
    assert project.calls == 2 and [row["trace"]["cache"] for row in found] == ["hit", "hit"]


def test_inherited_environment_material():
    environ = {"MODEL": "m", "OPENAI_API_KEY": "sk-x", "PWD": "/x", "SSH_TTY": "/dev/pts/1", "DB_password": "p"}
    assert inherited_environment(environ) == {"DB_password": "<secret>", "MODEL": "m", "OPENAI_API_KEY": "<secret>"}
    assert inherited_environment(environ, ["MOD*", "DB_*"]) == {"OPENAI_API_KEY": "<secret>"}
