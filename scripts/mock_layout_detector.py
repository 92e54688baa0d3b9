#!/usr/bin/env python3
"""A stand-in layout detector for the layout-detection example: prints its page's detections.

Usage: mock_layout_detector.py PAGE_FILE

Each page file under fixtures/layout/ holds what a detector "saw" on a synthetic document page:
regions with labels and boxes (deliberately a little off, one missed, one spurious), a rotated
stamp as a polygon, and the signature's centre point. A real project runs its model here.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: mock_layout_detector.py PAGE_FILE", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        page = json.load(handle)
    print(json.dumps(page["detections"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
