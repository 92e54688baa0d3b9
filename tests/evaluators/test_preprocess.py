"""What an LLM judge is sent when the target answered with content blocks naming files (AgentV
v4.42's preprocessors): text blocks, each file's text from its preprocessor or read as UTF-8,
and a warning line for what could not be read — never a file outside the project, never a hang."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.evaluators.base import EvalContext
from agentv_py.evaluators.preprocess import judged_answer
from agentv_py.models.preprocessors import Preprocessor, media_type, merged

TO_TEXT = """\
import json, sys
payload = json.load(sys.stdin)
print("converted", payload["media_type"], payload["original_path"], open(payload["path"], "rb").read().hex())
"""
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def blocks(*items: dict[str, Any]) -> list[Any]:
    return [{"role": "user", "content": "make it"}, {"role": "assistant", "content": list(items)}]


def file(path: str, kind: str = "text/plain") -> dict[str, Any]:
    return {"type": "file", "path": path, "media_type": kind}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "to_text.py").write_text(TO_TEXT)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_bytes(b"line one\r\nline two")
    (tmp_path / "work" / "report.xlsx").write_bytes(bytes([0, 159, 146, 150]))
    return tmp_path


def context(project: Path, messages: list[Any], suite: tuple[Preprocessor, ...] = ()) -> EvalContext:
    return EvalContext(
        "c1",
        "d",
        project / "evals",
        "the answer",
        None,
        output_messages=messages,
        preprocessors=suite,
        answer_dir=project / "work",
    )


def preprocessor(kind: str = "xlsx", script: str = "../scripts/to_text.py", **extra: Any) -> Preprocessor:
    return Preprocessor.model_validate({"type": kind, "command": [sys.executable, script], **extra})


def test_text_blocks_and_a_file_read_as_utf8(project):
    seen = judged_answer(context(project, blocks({"type": "text", "text": "Here:"}, file("notes.txt"))), None)
    assert seen == "Here:\n[[ file: notes.txt ]]\nline one\nline two"


def test_a_file_of_the_preprocessors_type_is_converted_by_it(project):
    messages = blocks(file("report.xlsx", XLSX))
    seen = judged_answer(context(project, messages, (preprocessor(),)), None)
    assert seen == f"[[ file: report.xlsx ]]\nconverted {XLSX} report.xlsx 009f9296"


def test_a_judges_own_preprocessor_replaces_the_suites_of_the_same_type(project):
    (project / "scripts" / "other.py").write_text("print('own')\n")
    ctx = context(project, blocks(file("report.xlsx", XLSX)), (preprocessor(),))
    assert judged_answer(ctx, [preprocessor(XLSX, "../scripts/other.py")]) == "[[ file: report.xlsx ]]\nown"


def test_an_answer_without_blocks_is_sent_as_it_is(project):
    assert judged_answer(context(project, [{"role": "assistant", "content": "plain"}]), None) == "the answer"
    assert judged_answer(context(project, None), None) == "the answer"


def warning(path: str, kind: str, reason: str) -> str:
    return f"[file preprocessing warning] {path} ({kind}): {reason}"


OUTSIDE = (
    "outside the project and the target's working directory: not read "
    "(an answer's files are data: only files of the project are sent to a judge)"
)


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        pytest.param(file("/etc/passwd"), OUTSIDE, id="absolute-path-outside"),
        pytest.param(file("../../../../../../etc/hostname"), OUTSIDE, id="traversal-outside"),
        pytest.param(file("file:///etc/passwd"), OUTSIDE, id="file-url-outside"),
        pytest.param(
            file("https://example.com/x.txt"), "remote file paths are not supported for preprocessing", id="remote"
        ),
        pytest.param(file("missing.txt"), "not found", id="missing"),
        pytest.param(
            file("report.xlsx", XLSX),
            "default UTF-8 read produced binary or invalid text; configure a preprocessor",
            id="binary-without-preprocessor",
        ),
    ],
)
def test_what_cannot_be_read_is_a_warning_line(project, block, reason):
    assert judged_answer(context(project, blocks(block)), None) == warning(block["path"], block["media_type"], reason)


def test_a_symlink_out_of_the_project_is_not_followed(project, tmp_path_factory):
    secret = tmp_path_factory.mktemp("elsewhere") / "secret.txt"
    secret.write_text("TOP SECRET")
    os.symlink(secret, project / "work" / "link.txt")
    seen = judged_answer(context(project, blocks(file("link.txt"))), None)
    assert "TOP SECRET" not in seen and seen == warning("link.txt", "text/plain", OUTSIDE)


def test_a_failing_preprocessor_is_a_warning_with_its_stderr(project):
    (project / "scripts" / "fails.py").write_text(
        "import sys\nsys.stderr.write('cannot parse workbook\\n')\nsys.exit(4)\n"
    )
    seen = judged_answer(
        context(project, blocks(file("report.xlsx", XLSX)), (preprocessor("xlsx", "../scripts/fails.py"),)), None
    )
    assert seen == warning("report.xlsx", XLSX, "cannot parse workbook")


def test_a_hanging_preprocessor_is_stopped_at_its_timeout(project):
    (project / "scripts" / "hangs.py").write_text("import time\ntime.sleep(60)\n")
    hanging = preprocessor("xlsx", "../scripts/hangs.py", timeout_seconds=0.5)
    seen = judged_answer(context(project, blocks(file("report.xlsx", XLSX)), (hanging,)), None)
    assert seen.startswith("[file preprocessing warning] report.xlsx") and "0.5" in seen


def test_a_file_over_the_cap_is_not_read(project, monkeypatch):
    monkeypatch.setattr("agentv_py.evaluators.preprocess.FILE_CAP", 4)
    seen = judged_answer(context(project, blocks(file("notes.txt"))), None)
    assert seen == warning("notes.txt", "text/plain", "over the 0 MB limit of a file read for a judge")


def test_the_text_is_made_once_per_case_for_every_judge(project):
    (project / "scripts" / "count.py").write_text(
        "import pathlib\np = pathlib.Path('calls')\n"
        "p.write_text(p.read_text() + 'x' if p.exists() else 'x')\nprint('ok')\n"
    )
    ctx = context(project, blocks(file("report.xlsx", XLSX)), (preprocessor("xlsx", "../scripts/count.py"),))
    assert judged_answer(ctx, None) == judged_answer(ctx, None)
    assert (project / "evals" / "calls").read_text() == "x"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("XLSX", XLSX),
        ("pdf", "application/pdf"),
        (" text/CSV ", "text/csv"),
        ("application/x-custom", "application/x-custom"),
    ],
)
def test_media_types_and_their_short_names(given, expected):
    assert media_type(given) == expected


def test_merged_keeps_the_suites_and_replaces_by_type():
    suite = [preprocessor("xlsx"), preprocessor("pdf")]
    own = [preprocessor(XLSX, "own.py")]
    assert [(p.media_type, p.command[-1]) for p in merged(suite, own)] == [
        (XLSX, "own.py"),
        ("application/pdf", "../scripts/to_text.py"),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"type": " ", "command": ["x"]}, "a preprocessor needs a type"),
        ({"type": "pdf", "command": []}, "command is a non-empty list of arguments"),
        ({"type": "pdf", "command": ["python3", ""]}, "command is a non-empty list of arguments"),
    ],
)
def test_bad_preprocessors(value, message):
    with pytest.raises(ValueError, match=message):
        Preprocessor.model_validate(value)


def test_a_command_string_is_split_never_given_to_a_shell():
    assert Preprocessor.model_validate({"type": "pdf", "command": "bun run x.ts; rm -rf /"}).command == [
        "bun",
        "run",
        "x.ts;",
        "rm",
        "-rf",
        "/",
    ]


def test_the_payload_names_the_real_path(project):
    (project / "scripts" / "echo.py").write_text("import sys\nprint(sys.stdin.read())\n")
    seen = judged_answer(context(project, blocks(file("notes.txt"))), [preprocessor("txt", "../scripts/echo.py")])
    payload = json.loads(seen.split("\n", 1)[1])
    assert payload == {
        "path": str((project / "work" / "notes.txt").resolve()),
        "original_path": "notes.txt",
        "media_type": "text/plain",
    }


BLOCK_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=40),
    st.sampled_from(["../../etc/passwd", "/dev/zero", "file:///proc/self/environ", "notes.txt", "", "~/.ssh/id_rsa"]),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)
BLOCKS = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "file", "image", "x"])},
        optional={
            "text": BLOCK_VALUES,
            "value": BLOCK_VALUES,
            "path": BLOCK_VALUES,
            "media_type": BLOCK_VALUES,
        },
    ),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(blocks=BLOCKS)
def test_any_content_blocks_give_text_and_never_raise_nor_read_outside(tmp_path_factory, blocks):
    project = tmp_path_factory.mktemp("p")
    (project / ".git").mkdir()
    (project / "evals").mkdir()
    (project / "work").mkdir()
    (project / "work" / "notes.txt").write_text("fine")
    seen = judged_answer(context(project, [{"role": "assistant", "content": blocks}]), None)
    assert isinstance(seen, str)
    assert "root:" not in seen and "PATH=" not in seen  # /etc/passwd, /proc/self/environ never read
