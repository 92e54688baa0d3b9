"""What a run is made of, as hashes: the dataset file, each case's evaluator list, the files
its judges read, its targets (secrets masked). The run manifest (`report.manifest`) records them,
so that `rescore` and `--resume` can tell whether a results file may be reused.

Every hash is SHA-256 of canonical JSON (sorted keys, no spaces) or of a file's bytes, so two runs
of the same inputs on any machine have the same hashes. Secrets never enter a manifest: a target's
config is masked (`Redactor`) before it is recorded or hashed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentv_py.loading.jsonl import is_jsonl, sidecar_path
from agentv_py.locate import repo_root, resolve_file, search_dirs, working_dir
from agentv_py.models.evaluators import CodeJudgeConfig, CompositeConfig
from agentv_py.models.judges import LlmJudgeConfig
from agentv_py.models.manifest import DatasetInfo, EvaluatorInfo, RunManifest, TargetFingerprint, TargetInfo
from agentv_py.models.targets import TargetConfig
from agentv_py.prepared import OWN_EVALUATORS, RUBRICS, LoadedDataset, PreparedCase, case_ids, cases_where
from agentv_py.process.command import needs_shell, script_argv
from agentv_py.process.redact import Redactor


def dataset_sha256(dataset: LoadedDataset) -> str:
    """The dataset file's content hash (a JSONL dataset: its bytes, then its sidecar's)."""
    digest = _hashed(hashlib.sha256(), dataset.path)
    sidecar = sidecar_path(dataset.path) if is_jsonl(dataset.path) else None
    if sidecar is not None and sidecar.is_file():
        digest.update(b"\0sidecar\0")
        _hashed(digest, sidecar)
    return str(digest.hexdigest())


def _hashed(digest: Any, path: Path) -> Any:
    """`digest` updated with the file's bytes, read a block (1 MiB) at a time, never whole."""
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest


def canonical_sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mapping_sha256(pairs: dict[str, str]) -> str:
    """`canonical_sha256` of a {str: str} map (the per-case evaluator hashes), fed to the digest an
    entry at a time, never as one JSON text: the same value, keys in code point order."""
    digest = hashlib.sha256(b"{")
    encode = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes for a str
    for n, key in enumerate(sorted(pairs)):
        digest.update((b"," if n else b"") + (encode(key) + ":" + encode(pairs[key])).encode("utf-8"))
    digest.update(b"}")
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    return str(_hashed(hashlib.sha256(), path).hexdigest())


def config_data(value: Any) -> Any:
    """A config as plain data for hashing: every field, pass-through keys, and the prompt template
    text a prompt file was read into (a private attribute `model_dump` leaves out)."""
    if isinstance(value, BaseModel):
        data = {name: config_data(getattr(value, name)) for name in type(value).model_fields}
        data.update({key: config_data(item) for key, item in (value.model_extra or {}).items()})
        template = getattr(value, "template", None)
        if isinstance(template, str):
            data["__template__"] = template
        return data
    if isinstance(value, dict):
        return {str(key): config_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [config_data(item) for item in value]
    return value


class _ByIdentity:
    """Digests of objects by identity, each object held while it is in the map, so that its id
    cannot be reused by another meanwhile (the cases of a big dataset are read back from disk a
    chunk at a time: new objects, and old ones freed). Cleared when it grows past `limit`."""

    def __init__(self, limit: int = 10_000) -> None:
        self._map: dict[tuple[int, ...], tuple[tuple[object, ...], str]] = {}
        self._limit = limit

    def get(self, objects: tuple[object, ...]) -> str | None:
        found = self._map.get(tuple(map(id, objects)))
        return found[1] if found is not None else None

    def put(self, objects: tuple[object, ...], digest: str) -> None:
        if len(self._map) >= self._limit:
            self._map.clear()
        self._map[tuple(map(id, objects))] = (objects, digest)


def _distinct_lists(cases: Sequence[PreparedCase], per_case: dict[str, str] | None = None) -> Iterator[PreparedCase]:
    """The cases whose evaluator lists may differ: those with their own list or rubrics, and one
    case of those left, whose list (the suite's, or the default judge) all of them share. When a
    case of those is skipped, its id is mapped to the first one's entry of `per_case` (filled by
    the caller for each case yielded). A big dataset's other cases are never read back."""
    special = set(cases_where(cases, OWN_EVALUATORS | RUBRICS))
    ids = case_ids(cases)
    first: str | None = None
    for i, case_id in enumerate(ids):
        if i in special:
            yield cases[i]
        elif first is None:
            first = case_id
            yield cases[i]
        elif per_case is not None:
            per_case[case_id] = per_case[first]


def evaluator_fingerprints(
    cases: Sequence[PreparedCase],
) -> tuple[dict[str, EvaluatorInfo], dict[str, str], str]:
    """(each distinct evaluator config's hash -> its type and name, each case id -> the hash of its
    evaluator list, the hash of that map)."""
    evaluators: dict[str, EvaluatorInfo] = {}
    per_case: dict[str, str] = {}
    known = _ByIdentity()  # a suite's configs are shared by every case: hashed once
    lists = _ByIdentity()
    digests: dict[str, str] = {}  # one string per distinct list digest
    for prepared in _distinct_lists(cases, per_case):
        configs = tuple(prepared.evaluators)
        listed = lists.get(configs)
        if listed is not None:
            per_case[prepared.case.id] = listed
            continue
        hashes = []
        for config in configs:
            digest = known.get((config,)) or canonical_sha256(config_data(config))
            known.put((config,), digest)
            evaluators.setdefault(
                digest, EvaluatorInfo(type=str(getattr(config, "type", "")), name=config.display_name)
            )
            hashes.append(digest)
        digest = canonical_sha256(hashes)
        listed = digests.setdefault(digest, digest)
        lists.put(configs, listed)
        per_case[prepared.case.id] = listed
    return evaluators, per_case, mapping_sha256(per_case)


def _walk(configs: Iterable[Any]) -> Iterable[Any]:
    for config in configs:
        yield config
        if isinstance(config, CompositeConfig):
            yield from _walk(config.evaluators)


def judge_files(dataset: LoadedDataset, cases: Sequence[PreparedCase]) -> dict[str, str]:
    """Content hashes of the project files the cases' judges read: code-judge and prompt-script
    words that name a file (relative to the judge's cwd), composite aggregator commands, prompt
    files. Files outside the project (an interpreter such as /usr/bin/python3) are left out."""
    found: dict[str, str] = {}
    dirs = search_dirs(dataset.directory)
    project = repo_root(dataset.directory) or dataset.directory  # an interpreter is not project content

    def add(path: Path) -> None:
        resolved = path.resolve()
        key = str(resolved)
        if key not in found and resolved.is_relative_to(project.resolve()) and resolved.is_file():
            try:
                found[key] = file_sha256(path)
            except OSError:
                found[key] = "unreadable"

    def add_words(script: list[str] | str, cwd: str | None) -> None:
        base = working_dir(dataset.directory, cwd)
        words = script.split() if isinstance(script, str) and needs_shell(script) else script_argv(script)
        for word in words:
            if word and not word.startswith("-"):
                add(base / word)

    seen = _ByIdentity()
    for prepared in _distinct_lists(cases):
        for config in _walk(prepared.evaluators):
            if seen.get((config,)) is not None:
                continue
            seen.put((config,), "")
            if isinstance(config, CodeJudgeConfig):
                add_words(config.script, config.cwd)
            elif isinstance(config, LlmJudgeConfig):
                if config.prompt_script is not None:
                    add_words(config.prompt_script.script, config.prompt_script.cwd)
                elif config.prompt_file is not None:
                    path, _ = resolve_file(config.prompt_file, dataset.directory, dirs)
                    if path is not None:
                        add(path)
            elif isinstance(config, CompositeConfig):
                aggregator = config.aggregator
                if aggregator.path is not None:
                    add_words(aggregator.path, aggregator.cwd)
                if aggregator.prompt_file is not None:
                    path, _ = resolve_file(aggregator.prompt_file, dataset.directory, dirs)
                    if path is not None:
                        add(path)
    return dict(sorted(found.items()))


def target_info(config: TargetConfig, redact: Redactor, fingerprint: TargetFingerprint | None = None) -> TargetInfo:
    """A target as a manifest records it: its config with every secret masked, that config's hash,
    and (the eval target's) its fingerprint (`runner.target_fingerprint`)."""
    data = redact.data(config_data(config))
    return TargetInfo(
        name=config.name,
        provider=str(getattr(config, "provider", "")),
        sha256=canonical_sha256(data),
        config=data,
        fingerprint=fingerprint,
    )


def build_manifest(
    *,
    run_id: str,
    results: Path,
    dataset: LoadedDataset,
    dataset_sha256: str,
    cases: Sequence[PreparedCase],
    target: TargetConfig,
    judges: dict[str, TargetConfig],
    secrets: Sequence[str],
    options: dict[str, Any],
    version: str,
    started_at: str,
    target_fingerprint: TargetFingerprint | None = None,
) -> RunManifest:
    redact = Redactor(secrets, mask_keys=True)
    evaluators, per_case, combined = evaluator_fingerprints(cases)
    every_case = combined if cases is dataset.cases else evaluator_fingerprints(dataset.cases)[2]
    return RunManifest(
        run_id=run_id,
        tool={"name": "agentv", "version": version},
        results=str(results.resolve()),
        dataset=DatasetInfo(
            path=str(dataset.path),
            name=dataset.name,
            sha256=dataset_sha256,
            cases=len(dataset.cases),
            case_ids=case_ids(cases),
            evaluators_sha256=every_case,
        ),
        evaluators=evaluators,
        case_evaluators=per_case,
        evaluators_sha256=combined,
        files=judge_files(dataset, cases),
        target=target_info(target, redact, target_fingerprint),
        judges={name: target_info(config, redact) for name, config in judges.items()},
        options=redact.data(options),
        started_at=started_at,
    )
