"""Ground truth kept in a file beside the dataset: a case's expected answer written as one
`type: file` item (`expected_messages: [{role: assistant, content: [{type: file, value: gt.json}]}]`,
or `expected_output: [{type: file, value: gt.yaml}]`). The file is found as an input file is (the
dataset's directory and its ancestors), may only lie inside the project (`case_files.Project`), and
is read with the limits of inline ground truth: JSON as `read_ground_truth` reads JSON text, YAML
with the dataset's own bounded loader, at most MAX_TRUTH_BYTES."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentv_py.errors import ConfigError
from agentv_py.loading.case_files import Project
from agentv_py.loading.ground_truth import GroundTruthError, read_ground_truth
from agentv_py.loading.source import read_yaml
from agentv_py.locate import not_found, resolve_file, search_dirs

MAX_TRUTH_BYTES = 16 * 1024 * 1024
SUFFIXES = (".json", ".yaml", ".yml")


def truth_file(value: Any) -> str | None:
    """The file a case's expected answer names (one `type: file` item), or None."""
    if not isinstance(value, list) or len(value) != 1:
        return None
    item = value[0]
    kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
    path = item.get("value") if isinstance(item, dict) else getattr(item, "value", None)
    return path if kind == "file" and isinstance(path, str) and path else None


class TruthFiles:
    """Reads the ground-truth files of one dataset (its search directories and project once)."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir
        self.dirs = search_dirs(base_dir)
        self.project = Project(base_dir)

    def read(self, value: str, label: str) -> Any:
        """The file's ground truth; GroundTruthError (one line) when it cannot be one."""
        found, tried = resolve_file(value, self.base_dir, self.dirs)
        if found is None:
            raise GroundTruthError(not_found("ground truth file", value, tried, label))
        refused = self.project.refuse("ground truth file", value, found, label)
        if refused is not None:
            raise GroundTruthError(refused)
        suffix = found.suffix.lower()
        if suffix not in SUFFIXES:
            raise GroundTruthError(f"ground truth file {value} must be .json, .yaml or .yml ({label})")
        size = found.stat().st_size
        if size > MAX_TRUTH_BYTES:
            raise GroundTruthError(
                f"ground truth file {value} is {size // (1024 * 1024)} MiB, over the "
                f"{MAX_TRUTH_BYTES // (1024 * 1024)} MiB cap ({label})"
            )
        if suffix == ".json":
            return self._json(found, value, label)
        try:
            _, data = read_yaml(found)
        except ConfigError as exc:
            raise GroundTruthError(f"ground truth file {value}: {exc.problems[0]} ({label})") from None
        return read_ground_truth(data)

    def _json(self, found: Path, value: str, label: str) -> Any:
        try:
            text = found.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GroundTruthError(f"ground truth file {value} cannot be read: {exc} ({label})") from None
        parsed = read_ground_truth(text)
        if parsed is text:  # not JSON text: a .json file must hold JSON
            raise GroundTruthError(f"ground truth file {value} is not JSON ({label})")
        return parsed
