"""A dataset may name only files inside its project (reviewer finding: `type: file` with
/etc/passwd, ../../root/.bashrc or /proc/self/environ passed validate, and an openai target read
the file and sent it to the model). File names are data (docs/security.md): after resolving, the
real path (symlinks followed) must lie in the repository holding the dataset (else the dataset's
directory) or the current directory, never under /proc, /sys or /dev, and be a regular file."""

from __future__ import annotations

import os

import pytest

from agentv_py import media
from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset
from agentv_py.runner import chat_messages
from tests.cli.test_eval import invoke
from tests.pngs import png


def item_dataset(ws, kind: str, value: str, path: str = "dataset.yaml") -> None:
    ws.file(
        path,
        f"""execution:
  evaluators:
    - {{type: field_accuracy, fields: [{{path: a}}]}}
evalcases:
  - id: c1
    input_messages:
      - role: user
        content:
          - {{type: {kind}, value: '{value}'}}
    expected_output: x
""",
    )


def problems_of(path: str = "dataset.yaml") -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_dataset(path)
    return [str(p) for p in caught.value.problems]


WHERE = "dataset.yaml:9: evalcases[0].input_messages[0].content[0].value"


def test_an_absolute_path_outside_the_project_is_refused(ws):
    item_dataset(ws, "file", "/etc/passwd")
    assert problems_of() == [
        f"{WHERE}: file /etc/passwd is outside the project ({ws.root.resolve()}, the repository holding the "
        "dataset); a dataset may only name files inside it (case 'c1')"
    ]


def test_dot_dot_out_of_the_project_is_refused_with_the_real_path(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("secret")
    value = os.path.relpath(outside, ws.root)
    item_dataset(ws, "file", value)
    assert problems_of() == [
        f"{WHERE}: file {value} (really {outside.resolve()}) is outside the project ({ws.root.resolve()}, "
        "the repository holding the dataset); a dataset may only name files inside it (case 'c1')"
    ]


def test_a_symlink_inside_the_project_pointing_out_is_refused(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.png"
    outside.write_bytes(png())
    (ws.root / "link.png").symlink_to(outside)
    item_dataset(ws, "image", "link.png")
    assert problems_of() == [
        f"{WHERE}: image link.png (really {outside.resolve()}) is outside the project ({ws.root.resolve()}, "
        "the repository holding the dataset); a dataset may only name files inside it (case 'c1')"
    ]


@pytest.mark.parametrize("kind", ["file", "image"])
def test_system_files_are_refused(ws, kind):
    item_dataset(ws, kind, "/proc/version")
    assert problems_of() == [
        f"{WHERE}: {kind} /proc/version is under /proc; a dataset may not name system files (case 'c1')"
    ]


def test_proc_self_environ_is_refused_whatever_the_current_directory(ws, monkeypatch):
    item_dataset(ws, "file", "/proc/self/environ")
    monkeypatch.chdir("/")  # the current directory is allowed, but never /proc
    problems = problems_of(str(ws.root / "dataset.yaml"))
    assert len(problems) == 1
    assert problems[0].endswith(
        "evalcases[0].input_messages[0].content[0].value: file /proc/self/environ "
        f"(really /proc/{os.getpid()}/environ) is under /proc; a dataset may not name system files (case 'c1')"
    )


def test_a_fifo_inside_the_project_is_refused(ws):
    os.mkfifo(ws.root / "pipe.txt")
    (ws.root / "fifo-link.txt").symlink_to(ws.root / "pipe.txt")
    item_dataset(ws, "file", "fifo-link.txt")
    # is_file() is False for a fifo (even through a symlink): it is never found, never opened
    assert problems_of()[0].startswith(f"{WHERE}: file not found: fifo-link.txt (case 'c1'); tried: ")


def test_outside_a_repository_the_project_is_the_datasets_directory(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (tmp_path / "shared.txt").write_text("above the dataset")
    (project / "data" / "near.txt").write_text("next to the dataset")
    item_dataset_at = project / "data" / "dataset.yaml"
    monkeypatch.chdir(project / "data")

    class At:
        root = project / "data"

        def file(self, name: str, text: str) -> None:
            (self.root / name).write_text(text)

    item_dataset(At(), "file", "near.txt")
    assert load_dataset(str(item_dataset_at)).cases[0].files == [str(project / "data" / "near.txt")]
    item_dataset(At(), "file", "../../shared.txt")
    assert problems_of() == [
        f"{WHERE}: file ../../shared.txt (really {(tmp_path / 'shared.txt').resolve()}) is outside the project "
        f"({(project / 'data').resolve()}, the dataset's directory); "
        "a dataset may only name files inside it (case 'c1')"
    ]


def test_files_anywhere_in_the_repository_and_the_current_directory_still_load(ws, tmp_path_factory, monkeypatch):
    ws.file("shared/notes.txt", "notes")
    item_dataset(ws, "file", "../shared/notes.txt", path="evals/dataset.yaml")
    assert load_dataset("evals/dataset.yaml").cases[0].files == [str(ws.root / "shared" / "notes.txt")]
    elsewhere = tmp_path_factory.mktemp("cwd")
    (elsewhere / "here.txt").write_text("here")
    monkeypatch.chdir(elsewhere)
    item_dataset(ws, "file", str(elsewhere / "here.txt"), path="evals/dataset.yaml")
    assert load_dataset(str(ws.root / "evals" / "dataset.yaml")).cases[0].files == [str(elsewhere / "here.txt")]


def test_eval_with_a_model_target_sends_nothing(ws, chat_server):
    ws.targets(f"""
        targets:
          - name: model
            provider: openai
            model: m
            base_url: {chat_server.base_url}
            api_key: k
            max_retries: 0
    """)
    item_dataset(ws, "file", "/proc/self/environ")
    result = invoke("eval", "dataset.yaml", "--target", "model")
    assert result.exit_code == 2
    assert "is under /proc; a dataset may not name system files (case 'c1')" in result.output
    assert chat_server.requests == []


# ----------------------------------------------------------------------------- caps when reading


def test_inlined_files_are_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(chat_messages, "DEFAULT_OUTPUT_CAP", 10)
    path = tmp_path / "big.txt"
    path.write_text("x" * 11)
    with pytest.raises(ValueError) as caught:
        chat_messages._inline_file(str(path))
    assert str(caught.value) == "file big.txt is over the 0 MB limit for a file inlined into a message"
    path.write_text("x" * 10)
    assert chat_messages._inline_file(str(path)) == '<file name="big.txt">\nxxxxxxxxxx\n</file>'


def test_the_inline_cap_message_at_the_real_cap(tmp_path):
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        handle.truncate(10 * 1024 * 1024 + 1)
    with pytest.raises(ValueError) as caught:
        chat_messages._inline_file(str(path))
    assert str(caught.value) == "file huge.txt is over the 10 MB limit for a file inlined into a message"


def test_an_image_grown_since_it_was_checked_is_not_sent(tmp_path):
    path = tmp_path / "grown.png"
    path.write_bytes(png())
    with path.open("ab") as handle:
        handle.truncate(media.MAX_IMAGE_BYTES + 1)
    with pytest.raises(ValueError) as caught:
        media.ImageRef("file", str(path), "image/png").url()
    assert str(caught.value) == "image grown.png is over the 20 MB limit for images"


def test_an_image_that_grew_past_its_cap_after_loading_is_an_error_reply(tmp_path, monkeypatch):
    from agentv_py import media
    from agentv_py.chat import ChatMessage
    from agentv_py.media import ImageRef
    from agentv_py.models.model_targets import OpenAITarget
    from agentv_py.runner.llm import OpenAIClient

    image = tmp_path / "grown.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    monkeypatch.setattr(media, "MAX_IMAGE_BYTES", 16)
    config = OpenAITarget.model_validate(
        {"name": "m", "provider": "openai", "model": "x", "base_url": "http://127.0.0.1:9", "vision": True}
    )
    reply = OpenAIClient(config).complete([ChatMessage("user", ["look", ImageRef("file", str(image), "image/png")])])
    assert reply.text is None and "over the" in (reply.error or "")
