"""The pure-Python similarity used by judges without rapidfuzz gives rapidfuzz's numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import JaroWinkler, Levenshtein

from agentv_py.scoring.match import _py_jaro_winkler, _py_levenshtein_similarity

text = st.text(alphabet="abcdeACME -.", max_size=14)


@settings(max_examples=500, deadline=None)
@given(a=text, b=text)
def test_levenshtein_fallback_agrees(a, b):
    assert _py_levenshtein_similarity(a, b) == pytest.approx(Levenshtein.normalized_similarity(a, b))


@settings(max_examples=500, deadline=None)
@given(a=text, b=text)
def test_jaro_winkler_fallback_agrees(a, b):
    assert _py_jaro_winkler(a, b) == pytest.approx(JaroWinkler.normalized_similarity(a, b, prefix_weight=0.1))


def test_known_values():
    assert _py_levenshtein_similarity("acme - shipping", "acme shipping") == pytest.approx(0.8667, abs=1e-4)
    assert _py_jaro_winkler("microsoft corp", "microsoft corporation") == pytest.approx(0.9333, abs=1e-4)
