"""YAML -> models, with `file:line: location: message` problems (SPEC §1, §2).

- `source`: reading YAML (parse cache, line index) and turning pydantic errors into problems;
- `dataset`: dataset loading, semantic checks and the prepared cases (`load_dataset`);
- `case_files`: input files and images of cases, found and checked;
- `targets`: targets files, `${{ VAR }}`, target selection, judge targets.

The prepared results (`LoadedDataset`, `PreparedCase`) live in `agentv_py.prepared`, so the
runner reads them without importing the loader.
"""

from __future__ import annotations

from agentv_py.loading.dataset import load_dataset
from agentv_py.loading.evaluator_lists import evaluator_lists
from agentv_py.loading.source import cache_dir, display_path, format_location
from agentv_py.loading.targets import (
    LoadedTargets,
    discover_targets_file,
    judge_target_problems,
    load_targets,
    select_target_name,
)

__all__ = [
    "LoadedTargets",
    "cache_dir",
    "discover_targets_file",
    "display_path",
    "evaluator_lists",
    "format_location",
    "judge_target_problems",
    "load_dataset",
    "load_targets",
    "select_target_name",
]
