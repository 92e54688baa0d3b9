"""The dataset side of `agentv_parity.py`: read an AgentV v4.42 dataset just enough to know its
cases and graders, decide which graders are deterministic, and serve a loopback stand-in model.

The stand-in is an OpenAI-compatible `/chat/completions` server on 127.0.0.1. It finds the case a
request is about by the case's last user text (the longest one found in the request), and answers:

- a case with an `expected_output`: that text (both tools then score the same answer);
- otherwise the string values of the case's checks, every other one (even cases: the 1st, 3rd, ...;
  odd cases: the 2nd, 4th, ...; a fixed refusal when none), so that some checks pass and some fail;
- a grader prompt (it mentions "candidate" and "score"): a fixed JSON verdict, score 0.5.
"""

from __future__ import annotations

import csv
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

STRING_CHECKS = {
    "contains",
    "contains-any",
    "contains-all",
    "icontains",
    "icontains-any",
    "icontains-all",
    "regex",
    "equals",
    "starts-with",
    "ends-with",
}
DETERMINISTIC = STRING_CHECKS | {
    "is-json",
    "field-accuracy",
    "tool-trajectory",
    "latency",
    "cost",
    "token-usage",
    "execution-metrics",
}
LLM = {"llm-grader", "llm-judge", "rubrics", "rubric", "threshold"}
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
REFUSAL = "I am sorry, I cannot help with that."
GRADER_REPLY = json.dumps(
    {"score": 0.5, "hits": ["stub"], "misses": ["stub"], "reasoning": "loopback stand-in", "assertions": []}
)


@dataclass
class Case:
    id: str
    key: str  # the last user text of the input: how a request is matched to its case
    expected: str | None
    graders: list[Any]
    answer: str = ""


@dataclass
class Dataset:
    path: Path
    cases: list[Case] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # grader type -> det/llm/sdk/uv/unknown
    skip: str = ""  # why it is not run; "" when it is
    turns: list[Case] = field(default_factory=list)  # a conversation case's turns: answered, not compared


def _text(value: Any) -> str:
    """The text of an input or expected_output: a string, a message list, or structured data."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        parts = [_text(m.get("content")) for m in value]
        return parts[-1] if parts else ""
    if isinstance(value, list):  # content parts
        return "\n".join(str(p.get("text", p.get("value", ""))) if isinstance(p, dict) else str(p) for p in value)
    if isinstance(value, dict) and "content" in value and set(value) <= {"role", "content"}:
        return _text(value["content"])
    return json.dumps(value, default=str)


def _user_text(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        users = [m for m in value if m.get("role") == "user"]
        if users:
            content = users[-1].get("content")
            if isinstance(content, list):
                texts = [p.get("value") or p.get("text") for p in content if isinstance(p, dict)]
                return next((t for t in texts if isinstance(t, str) and p_is_text(t)), "")
            return _text(content)
    return _text(value)


def p_is_text(text: str) -> bool:
    return bool(text.strip()) and not text.strip().endswith((".json", ".txt", ".pdf", ".png", ".md"))


def _load_tests(raw: Any, base: Path) -> list[dict[str, Any]]:
    if isinstance(raw, list):
        return [t for t in raw if isinstance(t, dict)]
    if not isinstance(raw, str):
        return []
    path = (base / raw.removeprefix("file://")).resolve()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    return _load_tests(loaded.get("tests") if isinstance(loaded, dict) else loaded, path.parent)


def _graders(node: dict[str, Any]) -> list[Any]:
    found = node.get("assertions", node.get("assert")) or []
    return list(found) if isinstance(found, list) else []


def _script(grader: dict[str, Any], eval_dir: Path) -> Path | None:
    command = grader.get("command") or grader.get("script") or grader.get("path") or []
    words = command.split() if isinstance(command, str) else [str(w) for w in command]
    base = eval_dir / str(grader.get("cwd", "."))
    for word in words:
        if word.endswith((".ts", ".js", ".py", ".mjs")):
            return (base / word).resolve()
    return None


def grader_kind(grader: Any, eval_dir: Path) -> str:
    """det: deterministic and comparable; llm: a model grades; sdk: a code grader that imports
    AgentV's SDK; uv: one run with `uv`, which is not installed; unknown: a custom type."""
    if isinstance(grader, str):
        return "llm"
    kind = str(grader.get("type", ""))
    if kind in DETERMINISTIC:
        return "det"
    if kind in LLM:
        return "llm"
    if kind == "composite":
        kinds = {grader_kind(g, eval_dir) for g in grader.get("assertions", grader.get("graders", []))}
        return "det" if kinds == {"det"} else "llm"
    if kind == "skill-trigger":
        return "skill"
    if kind == "code-grader":
        command = grader.get("command") or []
        if (isinstance(command, list) and command[:1] == ["uv"]) or str(command).startswith("uv "):
            return "uv"
        script = _script(grader, eval_dir)
        source = script.read_text(encoding="utf-8") if script and script.is_file() else ""
        if "@agentv/" in source:
            return "sdk"
        return "llm" if "target" in grader or "createTargetClient" in source else "det"
    return "unknown"


def read_dataset(path: Path) -> Dataset:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    ds = Dataset(path)
    if not isinstance(data, dict) or "tests" not in data:
        ds.skip = "not a dataset (no top-level `tests:`)"
        return ds
    suite = _graders(data) + _graders(data.get("execution") or {})
    try:
        tests = _load_tests(data["tests"], path.parent)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        ds.skip = f"cannot read its tests: {exc}"
        return ds
    for number, test in enumerate(tests):
        own = _graders(test)
        graders = own if test.get("skip_defaults") else suite + own
        ds.cases.append(
            Case(
                id=str(test.get("id", number)),
                key=_user_text(test.get("input", test.get("question", ""))).strip(),
                expected=_text(test.get("expected_output")) if test.get("expected_output") is not None else None,
                graders=graders,
            )
        )
        if test.get("mode") == "conversation":  # each turn answered as a case of its own, by its text
            for t, turn in enumerate(test.get("turns") or [], 1):
                if isinstance(turn, dict):
                    expected = turn.get("expected_output")
                    ds.turns.append(
                        Case(
                            id=f"{ds.cases[-1].id}/turn-{t}",
                            key=_user_text(turn.get("input", "")).strip(),
                            expected=_text(expected) if expected is not None else None,
                            graders=_graders(turn),
                        )
                    )
    for case in [*ds.cases, *ds.turns]:
        for grader in case.graders:
            name = grader if isinstance(grader, str) else str(grader.get("type", "?"))
            ds.kinds[name if not isinstance(grader, str) else "(criterion string)"] = grader_kind(grader, path.parent)
    kinds = set(ds.kinds.values())
    if ds.skip:
        pass
    elif "skill" in kinds:
        ds.skip = "`skill-trigger` grader (needs an agent's skill log)"
    elif "unknown" in kinds:
        custom = sorted(k for k, v in ds.kinds.items() if v == "unknown")
        ds.skip = f"custom assertion type(s) {', '.join(custom)} (TypeScript plugins)"
    elif not ds.cases:
        ds.skip = "no tests"
    elif "det" not in kinds:
        ds.skip = "no deterministic grader (" + (", ".join(f"{k}: {v}" for k, v in ds.kinds.items()) or "none") + ")"
    _choose_answers(ds.cases)
    _choose_answers(ds.turns)
    return ds


def _values(graders: list[Any]) -> list[str]:
    out: list[str] = []
    for grader in graders:
        if isinstance(grader, dict) and grader.get("type") in STRING_CHECKS and not grader.get("negate"):
            value = grader.get("value", grader.get("values"))
            if isinstance(value, list):
                out.append(" ".join(str(v) for v in value))
            elif grader.get("type") == "regex" and isinstance(value, str):
                out.extend(_regex_example(value))
            elif value is not None:
                out.append(str(value))
    return out


def _regex_example(pattern: str) -> list[str]:
    """A text the pattern matches, for the simple patterns of the examples (none when unsure)."""
    text = re.sub(r"\(\?[a-z]+\)", "", pattern).strip("^$")
    text = re.sub(r"\(([^()|]*)\|[^()]*\)", r"\1", text)  # (a|b) -> a
    text = re.sub(r"\[([^\]^])[^\]]*\]", r"\1", text)  # [Hh] -> H
    for escape, example in (("\\d", "1"), ("\\s", " "), ("\\w", "a"), ("\\.", "."), ("\\b", "")):
        text = text.replace(escape, example)
    text = re.sub(r"[+*?]|\{\d+(,\d*)?\}", "", text).replace(".", " ")
    try:
        return [text] if text and re.search(pattern, text) else []
    except re.error:
        return []


def _choose_answers(cases: list[Case]) -> None:
    for number, case in enumerate(cases):
        if case.expected is not None:
            case.answer = case.expected
            continue
        picked = _values(case.graders)[number % 2 :: 2]
        case.answer = "\n".join(picked) if picked else REFUSAL


def _request_text(body: dict[str, Any]) -> str:
    return "\n".join(_text(m.get("content")) for m in body.get("messages", []) if isinstance(m, dict))


def _last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    return _text(users[-1].get("content")) if users else ""


class StandIn:
    """The loopback model: `with StandIn(cases) as model:` serves on `model.endpoint`."""

    def __init__(self, cases: list[Case]) -> None:
        self.cases = sorted((c for c in cases if c.key), key=lambda c: -len(c.key))
        self.unmatched: list[str] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = stand_in.answer(_request_text(body), _last_user_text(body))
                if body.get("stream"):
                    self._stream(reply, str(body.get("model", "stub")))
                    return
                payload = {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "stub"),
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
                    ],
                    "usage": USAGE,
                }
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: str, model: str) -> None:
                base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0, "model": model}
                chunks = [
                    {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": reply}}]},
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    {**base, "choices": [], "usage": USAGE},
                ]
                data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data.encode())))
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, text: str, last: str = "") -> str:
        """The reply to a request whose messages' text is `text` (`last`: its last user message,
        matched first: a conversation's earlier turns are in `text` too)."""
        lowered = text.lower()
        if "score" in lowered and ("candidate" in lowered or "grader" in lowered or "rubric" in lowered):
            return GRADER_REPLY
        for case in self.cases:
            if last and case.key == last.strip():
                return case.answer
        for case in self.cases:
            if case.key in text:
                return case.answer
        self.unmatched.append(text[:80])
        return REFUSAL

    def __enter__(self) -> StandIn:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
