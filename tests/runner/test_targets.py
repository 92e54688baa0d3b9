"""Target runners against real tiny scripts: every failure is a one-line error, never a crash."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agentv_py.errors import ConfigError, TargetError
from agentv_py.models.dataset import EvalCase
from agentv_py.models.targets import CliTarget, MockTarget
from agentv_py.prepared import PreparedCase
from agentv_py.runner.outcome import unwrap_answer
from agentv_py.runner.targets import CliRunner, MockRunner
from agentv_py.scoring.answer import NOT_JSON
from tests.conftest import script, wait_dead


def case(files: list[str] = (), expected=None, question="Extract.") -> PreparedCase:
    return PreparedCase(EvalCase(id="case 1/x"), 0, list(files), [], expected, question, evaluators=[])


def cli(tmp_path: Path, command: str, **extra) -> CliRunner:
    config = CliTarget(name="t", provider="cli", command_template=command, **extra)
    return CliRunner(config, dataset_dir=tmp_path, work_dir=tmp_path)


def test_output_file_answer(tmp_path):
    source = tmp_path / "in.json"
    source.write_text('{"a": 1}')
    outcome = cli(tmp_path, f"sh {script('copy_file.sh')} {{FILES}} {{OUTPUT_FILE}}").invoke(case([str(source)]), 1)
    assert (outcome.answer, outcome.error, outcome.parsed) == ('{"a": 1}', None, {"a": 1})
    assert list(tmp_path.glob("*.out")) == []  # the temporary output file is removed


def test_stdout_answer(tmp_path):
    source = tmp_path / "in.json"
    source.write_text("plain text answer")
    outcome = cli(tmp_path, f"sh {script('echo_file.sh')} {{FILES}}").invoke(case([str(source)]), 1)
    assert (outcome.answer, outcome.parsed) == ("plain text answer", NOT_JSON)


FAILURES = [
    ("crash", "crash.sh", "target 't' failed: exit code 3: loading model | boom: extractor crashed on page 2"),
    ("not-utf8", "bad_utf8.sh", "target 't' answer (stdout) is not valid UTF-8 (byte 0xff at offset 7)"),
    ("empty", "empty.sh", "target 't' returned an empty answer (stdout)"),
    ("flood", "flood.sh", "target 't' failed: output exceeded the 10 MB cap (process group killed)"),
]


@pytest.mark.parametrize("name, message", [c[1:] for c in FAILURES], ids=[c[0] for c in FAILURES])
def test_failures_are_one_line_errors(tmp_path, name, message):
    outcome = cli(tmp_path, f"sh {script(name)}").invoke(case(), 1)
    assert (outcome.answer, outcome.error) == (None, message)


def test_timeout(tmp_path):
    outcome = cli(tmp_path, f"sh {script('sleep.sh')}", timeout_seconds=0.3).invoke(case(), 1)
    assert outcome.error == "target 't' failed: timed out after 0.3s (process group killed)"


def test_missing_output_file(tmp_path):
    outcome = cli(tmp_path, f"sh {script('no_output_file.sh')} {{OUTPUT_FILE}}").invoke(case(), 1)
    assert outcome.error == "target 't' exited 0 but did not write {OUTPUT_FILE}: forgot to write the output file"


def test_missing_program(tmp_path):
    outcome = cli(tmp_path, "no-such-extractor {FILES}").invoke(case(), 1)
    assert outcome.error == "target 't' failed: command not found: no-such-extractor (not on PATH)"
    assert outcome.retryable is False  # trying again cannot help


def test_which_failures_are_worth_retrying(tmp_path):
    not_executable = tmp_path / "run.sh"
    not_executable.write_text("echo hi\n")
    cases = [
        ("./run.sh", False),  # permission denied
        ("cd . && no-such-tool", False),  # the shell's 127: not found
        ("sh -c 'exit 127'", True),  # a program's own exit code is its business
        ("sh -c 'exit 1'", True),
    ]
    for template, retryable in cases:
        outcome = cli(tmp_path, template).invoke(case(), 1)
        assert (outcome.answer, outcome.retryable) == (None, retryable), template


def test_odd_file_names_reach_the_target_as_one_literal_argument(tmp_path):
    odd = tmp_path / "a b;$(touch x)'q.json"
    odd.write_text("{}")
    for template in (
        f"python3 {script('argv_json.py')} {{FILES}} {{EVAL_ID}}",
        f"python3 {script('argv_json.py')} {{FILES}} {{EVAL_ID}} | cat",
    ):
        outcome = cli(tmp_path, template).invoke(case([str(odd)]), 1)
        assert json.loads(outcome.answer)["argv"] == [str(odd), "case 1/x"], template
    assert not (tmp_path / "x").exists() and not Path("x").exists()


def test_prompt_placeholder(tmp_path):
    outcome = cli(tmp_path, f"python3 {script('argv_json.py')} {{PROMPT}}").invoke(case(question="It's $5; ok?"), 1)
    assert json.loads(outcome.answer)["argv"] == ["It's $5; ok?"]


def test_secrets_are_redacted_from_errors(tmp_path):
    config = CliTarget(name="t", provider="cli", command_template="sh -c 'echo key=sk-secret-1234 >&2; exit 1'")
    runner = CliRunner(config, dataset_dir=tmp_path, work_dir=tmp_path, secrets=["sk-secret-1234"])
    assert runner.invoke(case(), 1).error == "target 't' failed: exit code 1: key=***"


def test_cwd_defaults_to_the_dataset_directory(tmp_path):
    outcome = cli(tmp_path, "pwd").invoke(case(), 1)
    assert outcome.answer.strip() == str(tmp_path)


def test_env_is_passed(tmp_path):
    outcome = cli(tmp_path, "sh -c 'echo $EXTRACTOR_MODE'", env={"EXTRACTOR_MODE": "strict"}).invoke(case(), 1)
    assert outcome.answer.strip() == "strict"


ENVELOPES = [
    ("output-messages", '{"output_messages": [{"role": "assistant", "content": "hello"}]}', "hello", {}),
    (
        "output-messages-object",
        '{"output_messages": [{"role": "assistant", "content": {"a": 1}}], "cost_usd": 0.1}',
        '{"a":1}',
        {"cost_usd": 0.1},
    ),
    (
        "text-envelope",
        '{"text": "{\\"a\\": 2}", "token_usage": {"input": 3}}',
        '{"a": 2}',
        {"token_usage": {"input": 3}},
    ),
    (
        "text-field-of-a-real-answer-is-kept",
        '{"text": "Invoice", "invoice_number": "X"}',
        '{"text": "Invoice", "invoice_number": "X"}',
        {},
    ),
    (
        "v442-output",
        '{"output": [{"role": "assistant", "content": "hi", "tool_calls": [{"tool": "search"}]}], "cost_usd": 0.2}',
        "hi",
        {"cost_usd": 0.2},
    ),
    (
        "v442-output-wins-over-output-messages",
        '{"output": [{"role": "assistant", "content": "new"}], '
        '"output_messages": [{"role": "assistant", "content": "old"}]}',
        "new",
        {},
    ),
    ("an-output-field-of-a-real-answer-is-kept", '{"output": [1, 2]}', '{"output": [1, 2]}', {}),
    ("plain-json", '{"a": 1}', '{"a": 1}', {}),
    ("not-json", "hello", "hello", {}),
]


@pytest.mark.parametrize("raw, answer, trace", [c[1:] for c in ENVELOPES], ids=[c[0] for c in ENVELOPES])
def test_unwrap_answer(raw, answer, trace):
    outcome = unwrap_answer(raw)
    assert (outcome.answer, outcome.trace) == (answer, trace)


def test_mock_runner():
    echo = MockRunner(MockTarget(name="m", provider="mock", echo_expected=True))
    assert echo.invoke(case(expected={"a": 1}), 1).answer == '{"a":1}'
    assert echo.invoke(case(expected=None), 1).error == "target 'm' has no expected answer to echo for this case"
    fixed = MockRunner(MockTarget(name="m", provider="mock", response="fixed"))
    assert fixed.invoke(case(), 1).answer == "fixed"


def test_no_leftover_processes_after_failures(tmp_path):
    pid_file = tmp_path / "pid"
    cli(tmp_path, f"sh {script('grandchild_hang.sh')} {pid_file}", timeout_seconds=0.3).invoke(case(), 1)
    assert wait_dead(int(pid_file.read_text()))


def test_the_healthcheck_runs_with_the_targets_env(tmp_path):
    from agentv_py.runner.target_checks import run_healthcheck

    check = "sh -c 'test \"$MODEL_URL\" = http://127.0.0.1:9 || { echo MODEL_URL unset >&2; exit 1; }'"
    config = CliTarget.model_validate(
        {
            "name": "t",
            "provider": "cli",
            "command_template": "cat {FILES}",
            "env": {"MODEL_URL": "http://127.0.0.1:9"},
            "healthcheck": {"command_template": check},
        }
    )
    run_healthcheck(config, tmp_path, [])  # passes: it sees the target's env
    without = config.model_copy(update={"env": {}})
    with pytest.raises(TargetError, match="MODEL_URL unset"):
        run_healthcheck(without, tmp_path, [])


def test_an_answer_with_a_huge_integer_keeps_it_exact():
    outcome = unwrap_answer('{"id": 123456789012345678901234567890}')
    assert outcome.parsed == {"id": 123456789012345678901234567890}


NOT_REGULAR = [
    ("fifo", "mkfifo {OUTPUT_FILE}", "a FIFO"),
    ("symlink", "ln -s /etc/passwd {OUTPUT_FILE}", "a symlink"),
    ("directory", "mkdir {OUTPUT_FILE}", "a directory"),
    (
        "socket",
        "python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' {OUTPUT_FILE}",
        "a socket",
    ),
]


@pytest.mark.parametrize("command, kind", [c[1:] for c in NOT_REGULAR], ids=[c[0] for c in NOT_REGULAR])
def test_an_output_file_that_is_not_a_regular_file_is_refused_not_read(tmp_path, command, kind):
    """A FIFO would block the read forever; a symlink is never followed (nothing of /etc/passwd)."""
    outcome = cli(tmp_path, command, timeout_seconds=5).invoke(case(), 1)
    assert (outcome.answer, outcome.error) == (None, f"target 't' wrote {{OUTPUT_FILE}} as {kind}, not a regular file")


def test_an_output_file_that_cannot_be_opened_is_an_error(tmp_path, monkeypatch):
    runner = cli(tmp_path, "touch {OUTPUT_FILE}")

    real_open = os.open

    def refuse(path, flags, *args):
        if str(path).endswith(".out"):  # only the output file
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr("agentv_py.runner.local_target.os.open", refuse)
    outcome = runner.invoke(case(), 1)
    assert (outcome.answer, outcome.error) == (None, "target 't' wrote an unreadable {OUTPUT_FILE}: Permission denied")


# ----------------------------------------------------------------------------- http healthcheck


@pytest.fixture
def health_server(monkeypatch):
    """A tiny http server on 127.0.0.1: /ok 200, /down 503, /moved 302 to /ok, /slow answers after 3 s."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/slow":
                time.sleep(3)
            status = {"/down": 503, "/moved": 302}.get(self.path, 200 if self.path in ("/ok", "/slow") else 404)
            self.send_response(status)
            if status == 302:
                self.send_header("Location", "/ok")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def http_target(url: str, timeout: float = 5) -> CliTarget:
    return CliTarget.model_validate(
        {
            "name": "t",
            "provider": "cli",
            "command_template": "true",
            "healthcheck": {"type": "http", "url": url, "timeout_seconds": timeout},
        }
    )


def test_http_healthcheck_passes_on_2xx(tmp_path, health_server):
    from agentv_py.runner.target_checks import run_healthcheck

    run_healthcheck(http_target(f"{health_server}/ok"), tmp_path, [])
    run_healthcheck(http_target(f"{health_server}/moved"), tmp_path, [])  # a redirect to a 2xx


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_http_healthcheck_failures(tmp_path, health_server):
    from agentv_py.runner.target_checks import run_healthcheck

    port = free_port()  # nothing listens there
    failures = [
        (
            http_target(f"{health_server}/down"),
            f"healthcheck of target 't' failed: GET {health_server}/down returned 503",
        ),
        (
            http_target(f"{health_server}/nope"),
            f"healthcheck of target 't' failed: GET {health_server}/nope returned 404",
        ),
        (
            http_target(f"http://127.0.0.1:{port}/"),
            f"healthcheck of target 't' failed: GET http://127.0.0.1:{port}/ could not connect: Connection refused",
        ),
        (
            http_target(f"{health_server}/slow", timeout=0.5),
            f"healthcheck of target 't' failed: GET {health_server}/slow timed out after 0.5s",
        ),
    ]
    for config, message in failures:
        with pytest.raises(TargetError) as caught:
            run_healthcheck(config, tmp_path, [])
        assert caught.value.message == message


def test_http_healthcheck_url_from_the_environment_is_masked(ws, health_server, monkeypatch):
    from agentv_py.loading import load_targets
    from agentv_py.runner.target_checks import run_healthcheck

    ws.file(
        "targets.yaml",
        "targets:\n  - name: t\n    provider: cli\n    command_template: 'true'\n"
        "    healthcheck: {type: http, url: '${{ HEALTH_URL }}'}\n",
    )
    loaded = load_targets("targets.yaml")
    monkeypatch.setenv("HEALTH_URL", f"{health_server}/ok")
    config, secrets = loaded.with_env("t")
    run_healthcheck(config, ws.root, secrets)
    monkeypatch.setenv("HEALTH_URL", f"{health_server}/down")
    config, secrets = loaded.with_env("t")
    with pytest.raises(TargetError) as caught:
        run_healthcheck(config, ws.root, secrets)
    assert caught.value.message == "healthcheck of target 't' failed: GET *** returned 503"
    monkeypatch.setenv("HEALTH_URL", "ftp://example.invalid/")
    with pytest.raises(ConfigError) as problems:
        loaded.with_env("t")
    assert [str(p) for p in problems.value.problems] == [
        "targets.yaml:5: targets[0].healthcheck.url: url must start with http:// or https://, got '***' "
        "(after substituting ${{ HEALTH_URL }})"
    ]


APPENDS_JSON = "import json, sys; open(sys.argv[1] + '.json', 'w').write(json.dumps({'a': 1}))"
REPLACES = "import json, os, sys; open(os.path.splitext(sys.argv[1])[0] + '.json', 'w').write('{}')"


@pytest.mark.parametrize("program, written", [(APPENDS_JSON, "case_1_x.1.0.out.json"), (REPLACES, "case_1_x.1.0.json")])
def test_a_tool_that_chooses_its_own_ending_is_named_with_the_fix(tmp_path, program, written):
    """A tool that writes {OUTPUT_FILE} under another ending (appends .json, or replaces .out):
    the error names the path expected, the file written instead and the `output_suffix` to set;
    what it wrote is removed with the call."""
    (tmp_path / "tool.py").write_text(program)
    config = CliTarget(name="t", provider="cli", command_template=f"{sys.executable} tool.py {{OUTPUT_FILE}}")
    (tmp_path / "work").mkdir()
    runner = CliRunner(config, dataset_dir=tmp_path, work_dir=tmp_path / "work")
    outcome = runner.invoke(case(), 1)
    expected = runner.work_dir / "case_1_x.1.0.out"
    assert outcome.error == (
        "target 't' exited 0 but did not write {OUTPUT_FILE}: set output_suffix: .json on the target (the tool "
        f"chooses its own ending: it wrote {written} beside {expected})"
    )
    assert list(runner.work_dir.iterdir()) == []


def test_output_suffix_ends_the_output_file_name(tmp_path):
    (tmp_path / "tool.py").write_text(
        "import json, sys\n"
        "assert sys.argv[1].endswith('.json'), sys.argv[1]\n"
        "open(sys.argv[1], 'w').write(json.dumps({'a': 1}))\n"
    )
    runner = cli(tmp_path, f"{sys.executable} tool.py {{OUTPUT_FILE}}", output_suffix=".json")
    assert runner.invoke(case(), 1).answer == '{"a": 1}'


@pytest.mark.parametrize("suffix", ["json", ".", "../x", ".a/b", "." + "x" * 21, ".j son"])
def test_a_bad_output_suffix_is_refused(suffix):
    from pydantic import ValidationError

    from agentv_py.models.targets import CliTarget

    with pytest.raises(ValidationError, match="output_suffix must be a dot and 1 to 20 letters"):
        CliTarget.model_validate({"name": "t", "provider": "cli", "command_template": "x", "output_suffix": suffix})
