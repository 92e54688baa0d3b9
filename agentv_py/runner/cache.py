"""The answer cache: target answers and judge replies stored under their keys (`cache_keys`), in
the project's SQLite database (`cache_store`, docs/incremental.md). Nothing it holds is ever run:
a value is data, used only when its key matches exactly, and a value that does not parse is a
miss.

One wrapper idea for both kinds of call: look the key up, else call and keep what succeeded.
`CachedTarget` wraps a target runner's `invoke`; `CachedChat` wraps a judge's `complete` and keeps
a reply only once the evaluator found it valid (`ChatReply.settle`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentv_py.chat import ChatClient, ChatMessage, ChatReply, at_temperature
from agentv_py.models.targets import CliTarget, PythonTarget, TargetConfig
from agentv_py.prepared import PreparedCase
from agentv_py.runner.cache_keys import (
    FileDigests,
    chat_key,
    cli_case_key,
    inherited_environment,
    key_of,
    model_case_key,
    worker_case_key,
)
from agentv_py.runner.cache_store import BUSY_TIMEOUT_SECONDS, CacheStore, Kind
from agentv_py.runner.outcome import TargetOutcome, TargetRunner
from agentv_py.runner.target_fingerprint import program_digests, python_digests
from agentv_py.runner.targets import CliRunner, ModelRunner
from agentv_py.runner.worker_target import WorkerRunner
from agentv_py.scoring.answer import NOT_JSON
from agentv_py.scoring.jsontext import dumps, loads

VALUE_FORMAT = 1  # inside every stored value: what its fields mean


@dataclass(frozen=True)
class CacheSettings:
    """What a run caches, and where: the eval target's answers, the replies of the judge targets
    named in `judges`; `project`: the directories whose files a command's key hashes."""

    directory: Path
    target: bool = False
    judges: frozenset[str] = frozenset()
    project: tuple[Path, ...] = ()
    busy_timeout: float = BUSY_TIMEOUT_SECONDS


# -- values -----------------------------------------------------------------------------------


def encode_outcome(outcome: TargetOutcome) -> str:
    """A successful target outcome as a stored value (its answer, parsed JSON, messages, trace)."""
    data: dict[str, Any] = {"format": VALUE_FORMAT, "answer": outcome.answer, "trace": outcome.trace}
    if outcome.output_messages is not None:
        data["output_messages"] = outcome.output_messages
    if outcome.stderr is not None:
        data["stderr"] = outcome.stderr  # masked already: the row of a hit shows what the call said
    return dumps(data)


def decode_outcome(value: str) -> TargetOutcome | None:
    """The outcome a stored value holds, or None (a miss) when it does not parse as one."""
    data = _load(value)
    if data is None:
        return None
    answer, trace, messages = data.get("answer"), data.get("trace"), data.get("output_messages")
    if not isinstance(answer, str) or not isinstance(trace, dict):
        return None
    if messages is not None and not isinstance(messages, list):
        return None
    # the stored text is parsed again, never a stored parse: a hit is scored from the text the row shows
    said = data.get("stderr")
    stderr = said if isinstance(said, str) else None
    return TargetOutcome(answer, parsed=NOT_JSON, output_messages=messages, trace=trace, stderr=stderr)


def encode_reply(reply: ChatReply) -> str:
    return dumps({"format": VALUE_FORMAT, "text": reply.text, "model": reply.model})


def decode_reply(value: str) -> ChatReply | None:
    data = _load(value)
    if data is None:
        return None
    text, model = data.get("text"), data.get("model")
    if not isinstance(text, str) or not (model is None or isinstance(model, str)):
        return None
    return ChatReply(text, model=model, attempts=0, cached=True)


def _load(value: str) -> dict[str, Any] | None:
    try:
        data = loads(value)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != VALUE_FORMAT:
        return None
    return data


# -- wrappers ---------------------------------------------------------------------------------


class Cache:
    """One run's use of a store: keys built with shared file digests. `holds_secret(value)`: does a
    value about to be stored hold one of the run's secrets? Such a value is never written (the
    answer is still used; it is asked again next time)."""

    def __init__(
        self,
        store: CacheStore,
        project: tuple[Path, ...],
        holds_secret: Callable[[str], bool] = lambda value: False,
        mask: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.store = store
        self.project = project
        self.holds_secret = holds_secret
        self.mask = mask  # the run's secrets masked in every key: keyed by where they are used
        self.digests = FileDigests()
        self._programs: dict[str, dict[str, str]] = {}
        self._environments: dict[str, dict[str, str]] = {}

    def keep(self, kind: Kind, key: str, value: str) -> None:
        """Store a value, unless it holds a secret."""
        if not self.holds_secret(value):
            self.store.put(kind, key, value)

    def programs(self, runner: object) -> dict[str, str]:
        """The content hashes of the project files a cli runner's template names (none for others)."""
        if not isinstance(runner, CliRunner | WorkerRunner):
            return {}
        found = self._programs.get(runner.name)
        if found is None:
            config = runner.config
            if isinstance(config, PythonTarget) and isinstance(runner, WorkerRunner):
                found = python_digests(config, runner.argv, self.project, self.digests)
            elif isinstance(config, CliTarget):
                found = program_digests(config, Path(runner.cwd), self.project, self.digests)
            else:
                found = {}
            self._programs[runner.name] = found
        return found

    def environment(self, config: TargetConfig) -> dict[str, str]:
        """The environment a cli or python target's processes inherit, as key material (none for
        model targets): read once per target, when its first key is built."""
        if not isinstance(config, CliTarget | PythonTarget):
            return {}
        found = self._environments.get(config.name)
        if found is None:
            found = self._environments[config.name] = inherited_environment(os.environ, config.cache_env_ignore)
        return found


class CachedTarget:
    """A target runner whose answers go through the cache: a stored answer for the case's key, else
    the call, whose answer (never an error) is stored. The outcome's `cache` says which it was."""

    def __init__(self, runner: TargetRunner, config: TargetConfig, cache: Cache) -> None:
        self.runner = runner
        self.config = config
        self.cache = cache
        self.name = runner.name
        self.vision = runner.vision

    def key(self, case: PreparedCase) -> str | None:
        """The case's key; a repeat after the first (`--repeat K`) has a key of its own, so each
        of the K runs is answered once and replayed as that run (docs/statistics.md#repeats)."""
        key = self._case_key(case)
        if key is None or case.repeat is None or case.repeat == 1:
            return key
        return key_of("repeat", {"key": key, "repeat": case.repeat})

    def _case_key(self, case: PreparedCase) -> str | None:
        if isinstance(self.runner, CliRunner):
            programs = self.cache.programs(self.runner)
            environment = self.cache.environment(self.config)
            return cli_case_key(self.runner, case, programs, self.cache.digests, self.cache.mask, environment)
        if isinstance(self.runner, ModelRunner):
            return model_case_key(self.config, case, self.cache.digests, self.cache.mask)
        if isinstance(self.runner, WorkerRunner):
            programs = self.cache.programs(self.runner)
            environment = self.cache.environment(self.config)
            return worker_case_key(self.runner, case, programs, self.cache.digests, self.cache.mask, environment)
        return None

    def invoke(self, case: PreparedCase, attempt: int) -> TargetOutcome:
        key = self.key(case)
        if key is None:
            return self.runner.invoke(case, attempt)
        stored = self.cache.store.get("target", key)
        outcome = decode_outcome(stored) if stored is not None else None
        if outcome is not None:
            outcome.cache = "hit"
            return outcome
        outcome = self.runner.invoke(case, attempt)
        outcome.cache = "miss"
        if outcome.answer is not None and outcome.error is None:
            self.cache.keep("target", key, encode_outcome(outcome))
        return outcome

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        return self.runner.complete(messages)


class CachedChat:
    """A judge whose replies go through the cache. A stored reply comes back `cached`; a fresh one
    is stored only when the evaluator settles it as valid, and a stored one it finds invalid is
    forgotten (`ChatReply.settle`)."""

    def __init__(self, client: ChatClient, config: TargetConfig, cache: Cache, salt: tuple[int, ...] = ()) -> None:
        """`salt`: (repeat, rejudge) of a row after the first: its replies are kept apart, so each
        of `--repeat`'s runs and `--rejudge`'s scorings asks the judge once of its own."""
        self.client = client
        self.config = config
        self.cache = cache
        self.salt = salt
        self.name = client.name
        self.vision = client.vision

    def salted(self, salt: tuple[int, ...]) -> CachedChat:
        """This judge with replies keyed by `salt` too (`CachedChat.__init__`)."""
        return CachedChat(self.client, self.config, self.cache, salt)

    def with_temperature(self, temperature: float) -> ChatClient:
        """This judge at `temperature`: its replies are kept apart from those at the target's own
        (the key reads the config, at that temperature)."""
        client = at_temperature(self.client, temperature)
        if client is self.client:
            return self  # nothing samples (a command, a mock): the same replies
        config = self.config.model_copy(update={"temperature": temperature})
        return CachedChat(client, config, self.cache, self.salt)

    def complete(self, messages: list[ChatMessage]) -> ChatReply:
        programs = self.cache.programs(self.client) if isinstance(self.config, CliTarget) else {}
        environment = self.cache.environment(self.config)
        key = chat_key(self.config, programs, messages, self.cache.digests, self.cache.mask, environment)
        if key is None:
            return self.client.complete(messages)
        if self.salt:
            key = key_of("repeat", {"key": key, "salt": list(self.salt)})
        cache = self.cache
        stored = cache.store.get("judge", key)
        reply = decode_reply(stored) if stored is not None else None
        if reply is not None:
            reply.settle = lambda valid: None if valid else cache.store.delete("judge", key)
            return reply
        reply = self.client.complete(messages)
        if reply.text is not None and reply.error is None:
            value = encode_reply(reply)
            reply.settle = lambda valid: cache.keep("judge", key, value) if valid else None
        return reply
