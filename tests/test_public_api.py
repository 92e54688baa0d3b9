"""The public API: small, lazy, documented, and it works end to end."""

from __future__ import annotations

import subprocess
import sys

import agentv_py


def test_every_public_name_resolves_and_is_documented():
    for name in agentv_py.__all__:
        value = getattr(agentv_py, name)
        if callable(value) and name != "__version__":
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_importing_the_package_imports_nothing_heavy():
    code = (
        "import sys, agentv_py; "
        "print(sorted(m for m in sys.modules if m.startswith(('agentv_py.', 'pydantic', 'rich', 'yaml'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_name_is_an_attribute_error():
    try:
        agentv_py.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_load_and_run_from_python(ws):
    path = ws.cases_dataset([("c2", {"a": 1, "b": 3}, {"a": 1, "b": 2}), ("c1", {"a": 1, "b": 2}, {"a": 1, "b": 2})])
    ws.cli_target("cat {FILES}")
    dataset = agentv_py.load_dataset(path)
    assert [c.case.id for c in dataset.cases] == ["c2", "c1"]
    result = agentv_py.run_eval(path, out=str(ws.root / "out.jsonl"), workers=2)
    assert [(r.eval_id, r.verdict) for r in result.rows] == [("c2", "fail"), ("c1", "pass")]
    assert result.summary.completed == 2
    assert sorted(r.eval_id for _, r in agentv_py.read_rows(ws.root / "out.jsonl")) == ["c1", "c2"]
    assert agentv_py.match_fuzzy("Acme - Shipping", "Acme Shipping", threshold=0.85).passed
    assert agentv_py.verdict_for(agentv_py.PASS_THRESHOLD) == "pass"


def test_all_lists_exactly_the_lazy_exports():
    from agentv_py import _EXPORTS

    assert sorted(agentv_py.__all__) == sorted(["__version__", *_EXPORTS])
