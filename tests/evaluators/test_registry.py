from __future__ import annotations

from agentv_py.evaluators import REGISTRY
from agentv_py.models.evaluators import EVALUATOR_CONFIG_TYPES


def test_every_config_type_has_an_evaluator_and_vice_versa():
    assert set(REGISTRY) == set(EVALUATOR_CONFIG_TYPES)
