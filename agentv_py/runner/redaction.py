"""Masking secrets in what a run says: `redact_row` (the single step every row passes before it is
written or shown), the credentials in the cases' file URLs, the API keys a run sends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentv_py.models.results import ResultRow
from agentv_py.models.targets import TargetConfig, is_model_target
from agentv_py.prepared import URL_FILES, PreparedCase, cases_where
from agentv_py.process.redact import Redactor
from agentv_py.process.urls import is_url, url_secrets
from agentv_py.runner.chat_messages import NO_KEY, api_key


def redact_row(redact: Redactor, row: ResultRow) -> ResultRow:
    """`row` with every secret masked in every string, at any depth, and in the keys of its
    free-form dicts (answer, hits, misses, reasoning, evaluator details, error, trace). Free
    without secrets."""
    if not redact.active:
        return row
    try:
        if not redact.in_json(row.model_dump_json()):  # the usual case: one fast check
            return row
    except ValueError:  # a string pydantic cannot write as JSON (a lone surrogate): walk it
        pass

    def masked(fields: dict[str, Any]) -> dict[str, Any]:
        """One model's dumped fields masked: its field names are not data, and neither are `status`
        and `verdict` (closed vocabularies: a secret `pass` is no verdict); every value is, down to
        the keys of free-form dicts (`details`, token usage)."""
        return {name: value if name in ("status", "verdict") else redact.data(value) for name, value in fields.items()}

    data = row.model_dump()
    result = masked(data)
    result["evaluator_results"] = [masked(item) for item in data["evaluator_results"]]
    result["trace"] = masked(data["trace"])
    return ResultRow.model_validate(result)


def case_url_secrets(cases: Sequence[PreparedCase]) -> list[str]:
    """Credentials written in the cases' file URLs (`https://user:pass@...`): masked like keys."""
    with_urls = (cases[i] for i in cases_where(cases, URL_FILES))
    return [secret for case in with_urls for path in case.files if is_url(path) for secret in url_secrets(path)]


def sent_keys(configs: Sequence[TargetConfig]) -> list[str]:
    """The API keys the run sends to model targets and judges (not the placeholder sent to servers
    that need none)."""
    keys = (api_key(config) for config in configs if is_model_target(config))
    return [key for key in keys if key != NO_KEY]
