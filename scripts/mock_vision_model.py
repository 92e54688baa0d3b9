"""A stand-in vision model for the example in evals/vision: a canned answer per case.

    python scripts/mock_vision_model.py EVAL_ID IMAGE...

It checks that every image it is given exists and is a PNG, JPEG, WebP or GIF (so the example
proves {IMAGES} delivers real files), then prints the answer. Some answers are deliberately
imperfect so the validators and judges have something to find.
"""

from __future__ import annotations

import json
import sys

ANSWERS = {
    # validators.yaml
    "shelf-count": "There are 5 bottles and 8 cans on the shelf.",
    "sign-ocr": "PROJECT PROPOSAL Q1 2026",
    "form-json": json.dumps({"invoice_number": "1042", "item_count": 3, "total": 1250.0}),
    "chart-data": "Revenue by quarter: Q1 $1.2M, Q2 $1.1M, Q3 $1.45M, Q4 $1.9M; Q4 grew 20% over Q3.",
    # judges.yaml
    "office-description": "A wooden desk holds a computer monitor with a blue screen. To the right sits a green "
    "potted plant, and behind the desk is a window with a light blue sky. A cat sleeps on the desk.",
    "office-rubric": "A desk with a monitor and a small plant.",
    "activity": "Two people are playing catch with a red ball; the person on the left has just thrown it.",
    "scene-comparison": "In the second image the red square has moved from the left to the centre top, and a blue "
    "rectangle has appeared at the bottom left. The green circle did not change.",
    "pattern-reasoning": "Each row has one more dot than the row above (1, 2, 3), so the next row has 4 dots.",
    "form-structured": json.dumps({"invoice_number": "1042", "date": "2026-03-15", "item_count": 3, "total": 1250.0}),
    "landscape-quality": "Well exposed with a smooth sky gradient and a clear horizon. The sun on the right balances "
    "the frame, although the horizon sits close to the centre. Simple but pleasant.",
}

SIGNATURES = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF")


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: mock_vision_model.py EVAL_ID IMAGE...", file=sys.stderr)
        return 2
    eval_id, images = sys.argv[1], sys.argv[2:]
    for path in images:
        with open(path, "rb") as handle:
            if not handle.read(4).startswith(SIGNATURES):
                print(f"not an image: {path}", file=sys.stderr)
                return 3
    if eval_id not in ANSWERS:
        print(f"no canned answer for {eval_id}", file=sys.stderr)
        return 4
    print(ANSWERS[eval_id])
    return 0


if __name__ == "__main__":
    sys.exit(main())
