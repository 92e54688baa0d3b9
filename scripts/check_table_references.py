#!/usr/bin/env python3
"""TEDS on PubTabNet's own samples (issue 31): score the 20 tables of PubTabNet's
`src/sample_pred.json` against `src/sample_gt.json` with this tool's TEDS and compare each with
the value PubTabNet's demo notebook (`src/demo.ipynb`) published for it. Nothing is copied into
this repository: give the script a checkout of ibm-aur-nlp/PubTabNet, or a bare git directory of it.

Usage: python scripts/check_table_references.py PUBTABNET_DIR
Prints one line per table (published, ours, |difference|) and exits 1 if any differs by 1e-9.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentv_py.scoring.table_read import read_table
from agentv_py.scoring.teds import teds


def _read(repo: Path, name: str) -> str:
    if (repo / name).exists():
        return (repo / name).read_text(encoding="utf-8")
    return subprocess.run(  # a bare git directory (a mirror): read the file at HEAD
        ["git", "-C", str(repo), "show", f"HEAD:{name}"], check=True, capture_output=True, text=True
    ).stdout


def published(notebook: dict) -> dict[str, float]:
    """The score dictionary the demo printed (pprint output of `teds.batch_evaluate`)."""
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", []))
            if text.lstrip().startswith("{'PMC"):
                return dict(ast.literal_eval(text.strip()))
    raise SystemExit("no published scores in src/demo.ipynb")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    repo = Path(sys.argv[1])
    truth = json.loads(_read(repo, "src/sample_gt.json"))
    predictions = json.loads(_read(repo, "src/sample_pred.json"))
    values = published(json.loads(_read(repo, "src/demo.ipynb")))
    worst = 0.0
    for name, value in sorted(values.items()):
        ours = teds(read_table(predictions[name]), read_table(truth[name]["html"]))
        worst = max(worst, abs(ours - value))
        print(f"{name}  published {value:.12f}  ours {ours:.12f}  |diff| {abs(ours - value):.1e}")
    print(f"{len(values)} tables, largest difference {worst:.1e}")
    return 0 if worst <= 1e-9 else 1


if __name__ == "__main__":
    raise SystemExit(main())
