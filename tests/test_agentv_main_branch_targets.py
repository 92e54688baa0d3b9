"""AgentV's main-branch (5.1+) targets syntax is refused with one line naming the release and what
AgentV v4.42 wrote instead (loading.main_branch_targets)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_py.errors import ConfigError
from agentv_py.loading import load_targets
from agentv_py.loading.main_branch_targets import providers_file_hint


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "targets:\n  - id: t\n    provider: cli\n    command: echo\n",
            [
                "targets.yaml:2: targets[0].id: target key 'id' is AgentV 5.1.0's syntax (after v4.42.4, the "
                "format read here); instead, name the target with `name:`"
            ],
            id="id-for-name",
        ),
        pytest.param(
            "targets:\n  - name: t\n    provider: openai\n    runtime: host\n    config:\n      model: m\n",
            [
                "targets.yaml:4: targets[0].runtime: target key 'runtime' is AgentV 5.1.0's syntax (after v4.42.4, "
                "the format read here); instead, remove it: targets run on this host",
                "targets.yaml:5: targets[0].config: target key 'config' is AgentV 5.1.0's syntax (after v4.42.4, "
                "the format read here); instead, put the provider's keys (endpoint, api_key, model, command, ...) "
                "on the target itself",
            ],
            id="runtime-and-config",
        ),
        pytest.param(
            "targets:\n  - name: t\n    provider: openai\n    api_key: '{{ env.OPENAI_API_KEY }}'\n    model: m\n",
            [
                "targets.yaml:4: targets[0].api_key: {{ env.NAME }} is AgentV 5.1.0's syntax (after v4.42.4, the "
                "format read here); instead, write ${{ NAME }}"
            ],
            id="env-reference",
        ),
    ],
)
def test_main_branch_targets_syntax_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "targets.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_targets(tmp_path / "targets.yaml")
    assert [str(p) for p in caught.value.problems] == expected


def test_a_providers_yaml_is_named_when_no_targets_file_is_found(tmp_path: Path) -> None:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text("providers: []\n")
    assert providers_file_hint([tmp_path / "evals", tmp_path]) == (
        f"{tmp_path / '.agentv' / 'providers.yaml'} is AgentV 5.1.0's file (after v4.42.4, the format read here) "
        "and is not read; instead, name the targets in .agentv/targets.yaml"
    )
    assert providers_file_hint([tmp_path / "evals"]) is None
