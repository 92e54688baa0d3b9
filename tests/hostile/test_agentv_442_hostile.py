"""A dataset in AgentV v4.42's vocabulary is data: whatever shape its keys and values take, loading it
ends in a loaded dataset or a ConfigError with located problems, never another exception
(`loading.agentv_442`, its graders, values and case files)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_py.errors import ConfigError
from agentv_py.loading import load_dataset
from agentv_py.models.agentv_vocabulary import (
    CASE_KEYS,
    GRADER_TYPES,
    MAIN_BRANCH_GRADERS,
    MAIN_BRANCH_TOP,
    TOP_KEYS,
)

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=12)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=12,
)
texts = st.sampled_from(["hi", "{{ who }}", "file://x.yaml", "${{ HOME }}", "", "  ", "../x", "a" * 40]) | st.text(
    max_size=10
)
grader_types = st.sampled_from(sorted({*GRADER_TYPES, *MAIN_BRANCH_GRADERS, "code_judge", "nope", ""}))
grader = st.one_of(
    texts,
    st.fixed_dictionaries(
        {"type": grader_types},
        optional={
            "value": values | texts,
            "name": texts,
            "required": values,
            "min_score": values,
            "negate": values,
            "command": values | st.lists(texts, max_size=3),
            "criteria": st.lists(texts | st.dictionaries(st.sampled_from(["id", "outcome", "weight"]), values)),
            "assertions": st.lists(st.fixed_dictionaries({"type": grader_types}), max_size=2),
            "config": values,
            "args_match": values,
        },
    ),
    values,
)
graders = st.lists(grader, max_size=4) | values
case = st.dictionaries(
    st.sampled_from(CASE_KEYS) | st.sampled_from(["critera", "vars", "input_files"]),
    values | texts | graders,
    max_size=6,
) | st.fixed_dictionaries(
    {"id": texts},
    optional={
        "input": values | texts,
        "vars": st.dictionaries(st.sampled_from(["who", "n"]), values, max_size=2),
        "assertions": graders,
        "execution": st.dictionaries(st.sampled_from(["skip_defaults", "threshold", "assertions"]), values | graders),
        "input_files": values,
        "expected_output": values,
    },
)
document = st.fixed_dictionaries(
    {"tests": st.lists(case | texts, max_size=4) | texts | values},
    optional={
        "name": values | texts,
        "assertions": graders,
        "assert": graders,
        "execution": st.dictionaries(st.sampled_from(["target", "threshold", "assertions", "trials", "x"]), values),
        "input": values | texts,
        "input_files": values,
        "agentv_format": st.sampled_from(["4.42", "2026-02", 4.42, "5"]),
        "evalcases": values,
        **dict.fromkeys(list(MAIN_BRANCH_TOP)[:3], values),
    },
) | st.dictionaries(st.sampled_from(TOP_KEYS), values, max_size=4).map(lambda d: {**d, "tests": d.get("tests", [])})


@settings(max_examples=300, deadline=None)
@given(document)
def test_any_v442_document_loads_or_is_a_located_config_error(raw: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / ".git").mkdir()  # the project ends here: case files are looked for inside it only
        (root / "x.yaml").write_text("- {id: from-file, input: hi}\n")
        path = root / "dataset.eval.yaml"
        path.write_text(json.dumps(raw))  # JSON is YAML
        try:
            load_dataset(path)
        except ConfigError as exc:
            assert exc.problems and all(str(problem) for problem in exc.problems)
