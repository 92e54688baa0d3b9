# /// script
# requires-python = ">=3.11"
# dependencies = ["jsonschema>=4.18"]
# ///
"""JSON structure: the answer parses as JSON and fits a schema.

The schema is config `schema` (a JSON Schema), else inferred from the expected JSON: every key of
an expected object is required with the expected value's type, recursively; arrays take their
items' schema from the first expected item. Missing keys are listed in `details.missing_keys`
(as paths), every other violation in `details.errors`.
score = 0 when the answer is not JSON, else 1 - problems / checked keys (at least 0).
Config: schema, threshold (default 1.0).
"""

from agentv_py.judge import JudgeInput, JudgeResult, judge

TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def infer_schema(value):
    kind = TYPES.get(type(value), "string")
    if kind == "object":
        return {"type": "object", "required": list(value), "properties": {k: infer_schema(v) for k, v in value.items()}}
    if kind == "array":
        return {"type": "array", "items": infer_schema(value[0])} if value else {"type": "array"}
    if kind in ("integer", "number"):
        return {"type": "number"}  # 5 and 5.0 are the same quantity
    return {"type": kind}


def count_keys(schema):
    props = schema.get("properties") or {}
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    return (
        len(props)
        + sum(count_keys(s) for s in props.values() if isinstance(s, dict))
        + (count_keys(items) if items else 0)
    )


def path_of(parts):
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@judge
def json_structure_validator(inp: JudgeInput) -> JudgeResult:
    import jsonschema

    schema = inp.config.get("schema")
    source = "config"
    if schema is None:
        if inp.expected is None or isinstance(inp.expected, str):
            return JudgeResult(
                score=0.0, status="skipped", reasoning="no schema in config and no expected JSON to infer one from"
            )
        schema, source = infer_schema(inp.expected), "inferred from the expected JSON"
    if inp.candidate is None:
        return JudgeResult(
            score=0.0,
            misses=["the answer is not valid JSON"],
            passed=False,
            reasoning="the answer is not valid JSON",
            details={"valid_json": False, "schema_source": source, "missing_keys": [], "errors": []},
        )
    missing, errors = [], []
    for error in jsonschema.Draft202012Validator(schema).iter_errors(inp.candidate):
        where = path_of(error.absolute_path)
        if error.validator == "required":  # the keys from the schema and the object, not from the message's words
            present = error.instance if isinstance(error.instance, dict) else {}
            for key in error.validator_value:
                name = f"{where}.{key}" if where else str(key)
                if key not in present and name not in missing:
                    missing.append(name)
        else:
            errors.append(f"{where or '(root)'}: {error.message}")
    checked = max(count_keys(schema), 1)
    problems = len(missing) + len(errors)
    score = max(0.0, 1.0 - problems / checked)
    threshold = float(inp.config.get("threshold", 1.0))
    return JudgeResult(
        score=score,
        hits=["valid JSON"] + ([f"matches the schema ({source})"] if not problems else []),
        misses=[f"missing key {k}" for k in missing] + errors,
        passed=score >= threshold,
        reasoning=f"{problems} problem(s) over {checked} checked keys",
        details={
            "valid_json": True,
            "schema_source": source,
            "missing_keys": missing,
            "errors": errors,
            "checked_keys": checked,
        },
    )
