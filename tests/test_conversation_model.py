"""The pure parts of a conversation case (models/conversation.py): the window, the transcript,
the aggregation."""

from __future__ import annotations

import pytest

from agentv_py.models.conversation import aggregate, transcript, windowed
from agentv_py.models.messages import Message


def m(role: str, content: object) -> Message:
    return Message.model_validate({"role": role, "content": content})


HISTORY = [
    m("system", "S"),
    m("user", "u1"),
    m("assistant", "a1"),
    m("user", "u2"),
    m("assistant", "a2"),
    m("user", "u3"),
]


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        pytest.param(None, ["S", "u1", "a1", "u2", "a2", "u3"], id="no-window-everything"),
        pytest.param(1, ["S", "a2", "u3"], id="one-exchange-and-the-system-message"),
        pytest.param(2, ["S", "a1", "u2", "a2", "u3"], id="two-exchanges"),
        pytest.param(10, ["S", "u1", "a1", "u2", "a2", "u3"], id="window-larger-than-the-conversation"),
    ],
)
def test_window_keeps_system_messages_and_the_last_exchanges(size, expected):
    assert [message.content for message in windowed(HISTORY, size)] == expected


def test_a_system_message_anywhere_stays_in_the_window():
    history = [m("user", "u1"), m("system", "late"), m("assistant", "a1"), m("user", "u2")]
    assert [message.content for message in windowed(history, 1)] == ["late", "a1", "u2"]


def test_transcript_is_role_colon_content_blocks_and_structured_content_as_json():
    history = [m("user", "hi"), m("assistant", {"total": 3}), m("user", [{"type": "text", "value": "x"}])]
    assert transcript(history) == 'user: hi\n\nassistant: {"total": 3}\n\nuser: [{"type": "text", "value": "x"}]'


@pytest.mark.parametrize(
    ("how", "scores", "expected"),
    [
        pytest.param("mean", [1.0, 0.0, 0.5], 0.5, id="mean"),
        pytest.param("min", [1.0, 0.0, 0.5], 0.0, id="min"),
        pytest.param("max", [1.0, 0.0, 0.5], 1.0, id="max"),
        pytest.param("mean", [], 1.0, id="nothing-scored-is-1-as-in-agentv"),
    ],
)
def test_aggregation(how, scores, expected):
    assert aggregate(scores, how) == expected
