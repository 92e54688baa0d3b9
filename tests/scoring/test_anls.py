"""ANLS and ANLS* (scoring/anls.py) against the paper's reference implementation (`anls-star`):
its own examples, and 600 generated pairs of nested answers (typos, dropped and invented keys,
shuffled, shortened and padded lists, None, type mismatches, accepted alternatives)."""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest

from agentv_py.scoring.anls import anls, anls_star, nls, options

anls_star_package = pytest.importorskip("anls_star")


def reference(expected: Any, answer: Any) -> float:
    with warnings.catch_warnings():  # its ST-VQA compatibility mode warns
        warnings.simplefilter("ignore")
        return float(anls_star_package.anls_score(expected, answer))


def ours(expected: Any) -> Any:
    """The reference's tuples (accepted alternatives) as `options`."""
    if isinstance(expected, tuple):
        return options(*(ours(x) for x in expected))
    if isinstance(expected, list):
        return [ours(x) for x in expected]
    if isinstance(expected, dict):
        return {k: ours(v) for k, v in expected.items()}
    return expected


PAPER = [  # the examples of the ANLS* paper and the package's README
    ("Hello World", "Hello World"),
    ("Hello World", "Hello Wrld"),
    ("Hello World", "How are you?"),
    (["Hello World", "Hi World"], "Hello Wrld"),
    (("Hello World", "Hi World"), "Hi Wrld"),
    (["Hello", "World"], ["World", "Hello"]),
    (["Hello", "World"], ["World"]),
    (["Hello", "World"], ["Hello", "World", "Hello"]),
    ({"a": "Hello", "b": "World"}, {"b": "World", "a": "Hello"}),
    ({"a": "Hello", "b": "World"}, {"b": "World"}),
    ({"a": "Hello", "b": "World"}, {"a": "Hello", "b": "World", "c": "Foo"}),
    ({"a": ("hello", "world"), "b": ["this", "is", "a", "test"]}, {"a": "hello!", "b": ["a", "test", "this", "be"]}),
    (None, None),
    (None, ""),
    (None, "x"),
    ("x", None),
    ({"a": None}, {}),
    ({"a": "x"}, {"a": "x", "b": None}),
    ({"a": "x"}, {"a": "x", "b": ""}),
    ([], []),
    ({}, {}),
    ([{"name": "Coffee", "price": "2.50"}, {"name": "Tea", "price": "2.00"}], [{"name": "Tea", "price": "2"}]),
    ({"total": 12.5, "paid": True}, {"total": "12.5", "paid": "true"}),
    ({"items": ["a"]}, {"items": "a"}),
]


@pytest.mark.parametrize(("expected", "answer"), PAPER, ids=[f"paper-{i}" for i in range(len(PAPER))])
def test_the_papers_examples_score_as_the_reference(expected, answer):
    assert anls_star(ours(expected), answer) == pytest.approx(reference(expected, answer), abs=1e-6)


_WORDS = ["acme", "acme ltd", "invoice", "invoce", "total", "12.50", "12.5", "tea", "coffee", "EUR", "eur", ""]


def _leaf(rng: random.Random) -> Any:
    return rng.choice([*_WORDS, 3, 12.5, True, None])


def _tree(rng: random.Random, depth: int) -> Any:
    kind = rng.random()
    if depth <= 0 or kind < 0.4:
        return _leaf(rng)
    if kind < 0.7:
        return {rng.choice("abcdef"): _tree(rng, depth - 1) for _ in range(rng.randint(0, 4))}
    return [_tree(rng, depth - 1) for _ in range(rng.randint(0, 4))]


def _typo(text: str, rng: random.Random) -> str:
    if not text:
        return rng.choice(["", "x"])
    i = rng.randrange(len(text))
    return rng.choice([text[:i] + text[i + 1 :], text[:i] + "x" + text[i:], text.upper(), f"  {text} "])


def _perturbed(value: Any, rng: random.Random) -> Any:
    """An answer near `value`: typos, keys dropped or invented, items shuffled, dropped or added."""
    roll = rng.random()
    if roll < 0.08:
        return _leaf(rng)  # replaced: often a type mismatch
    if isinstance(value, dict):
        out = {k: _perturbed(v, rng) for k, v in value.items() if rng.random() > 0.15}
        if rng.random() < 0.25:
            out[rng.choice("ghij")] = rng.choice([_leaf(rng), None, ""])
        return out
    if isinstance(value, list):
        out = [_perturbed(v, rng) for v in value if rng.random() > 0.15]
        rng.shuffle(out)
        if rng.random() < 0.25:
            out.append(_tree(rng, 1))
        return out
    if isinstance(value, str):
        return _typo(value, rng) if roll < 0.6 else value
    return value


def _with_options(value: Any, rng: random.Random) -> Any:
    """Some leaves of a ground truth made accepted alternatives (the reference's tuples)."""
    if isinstance(value, dict):
        return {k: _with_options(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_options(v, rng) for v in value]
    if isinstance(value, str) and rng.random() < 0.2:
        return (value, rng.choice(_WORDS[:-1]))
    return value


@pytest.mark.parametrize("seed", range(12), ids=lambda s: f"batch-{s}")
def test_generated_pairs_score_as_the_reference(seed):
    rng = random.Random(seed)
    compared = 0
    for _ in range(50):
        expected = _with_options(_tree(rng, 3), rng)
        answer = _perturbed(_unwrap(expected, rng), rng)
        if expected == [] and isinstance(answer, str):
            continue  # the reference refuses it (no accepted answer); here an empty list against a text
        assert anls_star(ours(expected), answer) == pytest.approx(reference(expected, answer), abs=1e-6), (
            expected,
            answer,
        )
        compared += 1
    assert compared >= 45  # 12 batches: over 540 pairs in all


def _unwrap(value: Any, rng: random.Random) -> Any:
    """An answer made from a ground truth with alternatives: one alternative taken."""
    if isinstance(value, tuple):
        return rng.choice(value)
    if isinstance(value, dict):
        return {k: _unwrap(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v, rng) for v in value]
    return value


@pytest.mark.parametrize(
    ("expected", "answer", "score"),
    [
        ("Acme Ltd", "acme ltd", 1.0),
        ("Acme Ltd", "Acme Lt", 1 - 1 / 8),
        ("Acme Ltd", "Beta Co", 0.0),  # below the 0.5 cut-off
        ("  ACME   ltd ", "acme ltd", 1.0),  # trimmed, lower-cased, whitespace collapsed
        ("", "", 1.0),
    ],
    ids=["case", "one-edit", "cut-off", "whitespace", "empty"],
)
def test_nls_of_one_answer(expected, answer, score):
    assert nls(expected, answer) == pytest.approx(score)
    assert anls([expected], answer) == pytest.approx(reference((expected,), answer))


def test_anls_takes_the_best_accepted_answer_and_its_threshold_is_settable():
    assert anls(["Acme Ltd", "Acme Limited"], "Acme Limted") == pytest.approx(1 - 1 / 12)
    assert anls(["abcd"], "abxy") == pytest.approx(0.5)
    assert anls(["abcd"], "abxy", threshold=0.6) == 0.0
    assert anls([], "x") == 0.0
