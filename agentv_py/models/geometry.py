"""`iou_score` and `coordinate_distance`: their configs (README.md, docs/metrics.md#detection-ap)."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator, model_validator

from agentv_py.models.evaluator_base import EvaluatorBase, finite_non_negative, unit_interval


class _GeometryBase(EvaluatorBase):
    path: str | None = None  # where the shape(s) sit in the answer; None: the whole answer
    expected_path: str | None = None  # where they sit in the ground truth; default: `path`
    matching: Literal["optimal", "index"] = "optimal"

    @property
    def label(self) -> str:
        return self.path or "answer"


class IouScoreConfig(_GeometryBase):
    """`iou_score`: intersection over union of boxes or polygons, one or a list."""

    type: Literal["iou_score"]
    format: Literal["xyxy", "xywh", "polygon"] = "xyxy"
    expected_format: Literal["xyxy", "xywh", "polygon"] | None = None
    threshold: float = 0.5
    polygon_mode: Literal["exact", "bbox"] = "exact"
    # labelled boxes (docs/metrics.md#detection-ap): each box an object, its class at `label_key`,
    # its shape at `box_key`, the detector's confidence at `score_key`; `agentv metrics` gives COCO AP
    label_key: str | None = None
    box_key: str | None = None
    score_key: str | None = None

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return unit_interval(value, "threshold")

    @field_validator("label_key", "box_key", "score_key")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must name a key of the box objects, e.g. label")
        return value

    @model_validator(mode="after")
    def _labelled(self) -> IouScoreConfig:
        for name in ("box_key", "score_key"):
            if getattr(self, name) is not None and self.label_key is None:
                raise ValueError(f"{name} goes with label_key: boxes are objects only when they carry a class")
        return self

    @property
    def shape_key(self) -> str:
        """Where a labelled box's shape sits (`box_key`, default `bbox`, COCO's name)."""
        return self.box_key or "bbox"


class CoordinateDistanceConfig(_GeometryBase):
    """`coordinate_distance`: points within a distance of their expected position."""

    type: Literal["coordinate_distance"]
    metric: Literal["euclidean", "manhattan", "cosine"] = "euclidean"
    threshold: float

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float) -> float:
        return finite_non_negative(value, "threshold")
