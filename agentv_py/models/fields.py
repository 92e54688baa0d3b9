"""`field_accuracy`: its field specs (match types and their options) and its config."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agentv_py.models.base import StrictModel, one_of
from agentv_py.models.evaluator_base import EvaluatorBase, finite_non_negative, unit_interval

MATCH_TYPES: tuple[str, ...] = (
    *("exact", "fuzzy", "numeric_tolerance", "date", "items", "set", "any", "count"),
    *("anls", "cer", "wer", "table"),
)
TABLE_METRICS: tuple[str, ...] = ("teds", "teds_struct", "grits_top", "grits_con", "grits_loc")  # `match: table`
VALUE_MATCHES: tuple[str, ...] = ("exact", "fuzzy", "numeric_tolerance", "date", "anls", "cer", "wer")  # `of` lists
FUZZY_ALGORITHMS: tuple[str, ...] = ("levenshtein", "jaro_winkler")
ITEM_ALGORITHMS: tuple[str, ...] = ("optimal", "greedy")  # `match: items` alignment (SPEC §5 line items)
DEFAULT_DATE_FORMATS: tuple[str, ...] = ("YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY")
DateOrder = Literal["dmy", "mdy", "ymd"]
# `date_order`: how the default formats read a date whose day and month could be swapped
DATE_FORMATS_BY_ORDER: dict[str, tuple[str, ...]] = {
    "dmy": ("YYYY-MM-DD", "DD-MMM-YYYY", "DD/MM/YYYY", "DD.MM.YYYY", "DD-MM-YYYY", "MM/DD/YYYY"),
    "mdy": ("YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "MM-DD-YYYY", "DD/MM/YYYY"),
    "ymd": ("YYYY-MM-DD", "YYYY/MM/DD", "YYYY.MM.DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY"),
}
DATE_TOKENS = ("YYYY", "MMMM", "MMM", "YY", "MM", "DD", "M", "D")

# Options that only make sense for one match type; giving them elsewhere is a config error
# (a `tolerance` on an exact field is almost certainly a mistake in `match`).
_OPTIONS_BY_MATCH: dict[str, tuple[str, ...]] = {
    "exact": (),
    "numeric_tolerance": ("tolerance", "relative"),
    "fuzzy": ("algorithm", "threshold", "case_sensitive"),
    "date": ("formats", "date_order"),
    "items": ("key", "threshold", "algorithm", "fields"),
    "set": ("of",),
    "any": ("of",),
    "count": ("min", "max"),
    "anls": ("threshold",),
    "cer": ("threshold", "case_sensitive"),
    "wer": ("threshold", "case_sensitive"),
    "table": ("metric", "threshold"),
}


class FieldSpec(StrictModel):
    """One field of a `field_accuracy` evaluator."""

    path: str
    # checked by `_match` (its error lists the types); the schema enumerates them for editors
    match: str = Field("exact", json_schema_extra={"enum": list(MATCH_TYPES)})
    required: bool = True
    critical: bool = False  # a miss fails the case, whatever the weighted score
    weight: float | Literal["per_item"] = 1.0  # per_item (match: items): each expected item weighs one
    tolerance: float | None = None
    relative: bool = False
    algorithm: str = "levenshtein"
    threshold: float = 0.85
    case_sensitive: bool = False
    formats: list[str] | None = None
    date_order: DateOrder | None = None  # `match: date` without `formats`: day/month order (dmy, mdy, ymd)
    key: list[str] | None = None  # `match: items`: sub-paths that pair expected and actual items
    fields: list[FieldSpec] | None = None  # `match: items`: sub-fields scored in each matched pair
    of: list[FieldSpec] | None = None  # `match: any` / `set`: the value matchers tried, in order
    min: int | None = Field(None, ge=0)  # `match: count`: bounds on the answer's list length
    max: int | None = Field(None, ge=0)
    metric: str | None = None  # `match: table`: teds (default), teds_struct, grits_top, grits_con, grits_loc

    @field_validator("match")
    @classmethod
    def _known_match(cls, value: str) -> str:
        return one_of(value, MATCH_TYPES, "match type", "types")

    @field_validator("path")
    @classmethod
    def _non_empty_path(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("path must not be empty")
        return value

    @field_validator("weight", mode="before")
    @classmethod
    def _weight(cls, value: Any) -> float | str:
        if value == "per_item":
            return "per_item"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"weight must be a number >= 0, or per_item for a match 'items' field, got {value!r}")
        return finite_non_negative(value, "weight")

    @field_validator("tolerance")
    @classmethod
    def _tolerance(cls, value: float | None) -> float | None:
        return None if value is None else finite_non_negative(value, "tolerance")

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return unit_interval(value, "threshold")

    @field_validator("algorithm")
    @classmethod
    def _algorithm(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("match") == "items":
            return one_of(value, ITEM_ALGORITHMS, "algorithm", "algorithms")
        return one_of(value, FUZZY_ALGORITHMS, "algorithm", "algorithms")

    @field_validator("metric")
    @classmethod
    def _table_metric(cls, value: str | None) -> str | None:
        return None if value is None else one_of(value, TABLE_METRICS, "metric", "metrics")

    @field_validator("key")
    @classmethod
    def _key(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("key must list at least one sub-path (omit it for the default [description])")
        if value is not None and any(not path.strip() for path in value):
            raise ValueError("key paths must not be empty")
        return value

    @field_validator("fields")
    @classmethod
    def _item_fields(cls, value: list[FieldSpec] | None) -> list[FieldSpec] | None:
        if value is not None and not value:
            raise ValueError("fields must list at least one sub-field")
        for spec in value or []:
            if spec.match == "items":
                raise ValueError(
                    f"nested match 'items' (at '{spec.path}') is not supported: score the inner list with a code judge"
                )
            if spec.critical:
                raise ValueError(
                    f"critical applies to a top-level field, not to the sub-field '{spec.path}': make the items "
                    "field critical (it misses when any item is missing, extra or wrong)"
                )
        return value

    @field_validator("of", mode="before")
    @classmethod
    def _matchers(cls, value: Any, info: ValidationInfo) -> Any:
        """`of: [exact, {match: fuzzy, threshold: 0.9}]`: each entry a match type, or one with its
        options; entries take the field's path (they match its value)."""
        if not isinstance(value, list):
            return value
        path = info.data.get("path", "")
        return [
            {"match": entry, "path": path} if isinstance(entry, str) else _with_path(entry, path) for entry in value
        ]

    @field_validator("of")
    @classmethod
    def _value_matchers(cls, value: list[FieldSpec] | None, info: ValidationInfo) -> list[FieldSpec] | None:
        if value is not None and not value:
            raise ValueError("of must list at least one matcher")
        for spec in value or []:
            if spec.path != info.data.get("path", spec.path):
                raise ValueError(f"path belongs on the field, not on a matcher in its 'of' list (got '{spec.path}')")
            # `any` may try a multiset too: a value that is a string here and an unordered list there
            allowed = (*VALUE_MATCHES, "set") if info.data.get("match") == "any" else VALUE_MATCHES
            if spec.match not in allowed:
                raise ValueError(f"of lists value matchers ({', '.join(allowed)}), not '{spec.match}'")
            given = {"required", "critical", "weight"} & spec.model_fields_set
            if given:
                raise ValueError(f"{', '.join(sorted(given))} belongs on the field, not on a matcher in its 'of' list")
        return value

    @field_validator("formats")
    @classmethod
    def _formats(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("formats must not be empty (omit it to use the defaults)")
        for fmt in value:
            if not any(token in fmt for token in ("YYYY", "YY")) or not any(t in fmt for t in ("M", "D")):
                raise ValueError(
                    f"Invalid date format: {fmt}. A format needs a year (YYYY or YY), a month "
                    "(MM, M, MMM or MMMM) and a day (DD or D), e.g. DD-MMM-YYYY"
                )
        return value

    @model_validator(mode="before")
    @classmethod
    def _options_fit_match(cls, data: Any, info: ValidationInfo) -> Any:
        data = cls.strip_unknown_keys(data, info)
        if not isinstance(data, dict):
            return data
        match = data.get("match", "exact")
        if match not in _OPTIONS_BY_MATCH:
            return data  # the field validator reports the bad match type
        foreign = list(
            dict.fromkeys(
                key
                for other, keys in _OPTIONS_BY_MATCH.items()
                if other != match
                for key in keys
                if key in data and key not in _OPTIONS_BY_MATCH[match]
            )
        )
        if foreign:
            raise ValueError(
                f"option {', '.join(repr(k) for k in foreign)} does not apply to match '{match}' "
                f"(options for '{match}': {', '.join(_OPTIONS_BY_MATCH[match]) or 'none'})"
            )
        if data.get("weight") == "per_item" and match != "items":
            raise ValueError(
                f"weight per_item applies to a match 'items' field (each expected item weighs one field), "
                f"not to match '{match}': give a number"
            )
        if data.get("critical") is True and data.get("required") is False:
            raise ValueError(
                "a critical field must be required: an optional field the answer leaves out is not scored, "
                "so it could never fail its case (drop 'required: false' or 'critical: true')"
            )
        if match == "any" and not data.get("of"):
            raise ValueError(
                "match 'any' needs 'of': the matchers tried in order, the first that can read the expected "
                "value decides, e.g. of: [numeric_tolerance, fuzzy] (options: of: [{match: fuzzy, threshold: 0.9}])"
            )
        low, high = data.get("min"), data.get("max")
        if match == "count" and isinstance(low, int) and isinstance(high, int) and low > high:
            raise ValueError(f"count's min ({low}) is above its max ({high})")
        if match == "numeric_tolerance" and data.get("tolerance") is None:
            raise ValueError("numeric_tolerance needs 'tolerance' (a number >= 0)")
        if match == "items":
            if data.get("fields") is None:
                raise ValueError(
                    "match 'items' needs 'fields': the sub-fields scored in each matched item, "
                    "e.g. [{path: quantity, match: numeric_tolerance, tolerance: 0}]"
                )
            # SPEC §5 line-item defaults (fuzzy's threshold default, 0.85, does not apply here)
            data = {"key": ["description"], "threshold": 0.8, "algorithm": "optimal", **data}
        if match == "anls":  # the literature's cut-off (scoring/anls.py), not fuzzy's 0.85
            data = {"threshold": 0.5, **data}
        if match in ("cer", "wer"):  # 1 - rate: a hit at 10% errors or fewer; case counts (OCR)
            data = {"threshold": 0.9, "case_sensitive": True, **data}
        if match == "table":  # scoring/tables.py: TEDS unless said otherwise, a hit at 0.9
            data = {"threshold": 0.9, "metric": "teds", **data}
        return data

    @property
    def bounded(self) -> bool:
        """A `match: count` field with `min` or `max`: checked against its bounds, not the ground truth."""
        return self.match == "count" and (self.min is not None or self.max is not None)

    @property
    def date_formats(self) -> tuple[str, ...]:
        """The formats tried after ISO 8601: `formats`, else the defaults in `date_order`."""
        if self.formats:
            return tuple(self.formats)
        return DATE_FORMATS_BY_ORDER[self.date_order] if self.date_order else DEFAULT_DATE_FORMATS

    @property
    def date_unsettled(self) -> bool:
        """Neither `formats` nor `date_order`: a date whose day and month could be swapped is read
        month first, and said to be ambiguous."""
        return not self.formats and self.date_order is None


def _with_path(entry: Any, path: Any) -> Any:
    return {**entry, "path": path} if isinstance(entry, dict) and "path" not in entry else entry


class FieldAccuracyConfig(EvaluatorBase):
    """`field_accuracy`: compare fields of the JSON answer with the ground truth."""

    type: Literal["field_accuracy"]
    fields: list[FieldSpec]
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"
    # `penalise` (or `penalize`): every key the answer adds beyond the ground truth is a missed field
    # of weight 1 (a false positive): KIE entity F1 counts invented fields, so does the case score
    extra_fields: Literal["ignore", "penalise", "penalize"] = "ignore"
    # the answer's key whose object maps field paths to the extractor's confidence in [0, 1]
    # (`{_confidence: {total: 0.93}}`): recorded on each field, for `agentv metrics --calibration`
    confidence: str | None = None

    def labels(self) -> list[str]:
        """Each field's name in results (`details.fields[].path`, hits, misses, metrics, gates): its
        path, or `path:match` where fields of this evaluator share the path (`$:count`, `$:items`)."""
        return field_labels(self.fields)

    @field_validator("fields")
    @classmethod
    def _some_fields(cls, value: list[FieldSpec]) -> list[FieldSpec]:
        if not value:
            raise ValueError("fields must list at least one field")
        return value


def field_labels(specs: list[FieldSpec]) -> list[str]:
    """`FieldAccuracyConfig.labels` of a list of fields (an items field's sub-fields too)."""
    paths = [spec.path for spec in specs]
    if len(set(paths)) == len(paths):
        return paths
    return [f"{spec.path}:{spec.match}" if paths.count(spec.path) > 1 else spec.path for spec in specs]


class AnlsStarConfig(EvaluatorBase):
    """`anls_star`: ANLS* of the whole answer (or the value at `path`) against the ground truth
    (Peer et al. 2024; `scoring.anls`): dicts, lists and None as the paper scores them."""

    type: Literal["anls_star"]
    path: str | None = None  # where the value sits in the answer; None: the whole answer
    expected_path: str | None = None  # where it sits in the ground truth; default: `path`
    threshold: float = 0.5  # ANLS's cut-off of each leaf

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return unit_interval(value, "threshold")
