#!/usr/bin/env python3
"""A stand-in extractor for the example eval: "extracts" an invoice by copying its fixture.

Usage: mock_extractor.py INPUT_FILE [INPUT_FILE ...] OUTPUT_FILE

In a real project this is your extractor (an OCR + LLM pipeline, a parser, ...). Here each input
file already holds the JSON the extractor would produce, with deliberate mistakes, so the eval has
something to find. Exit codes: 0 ok, 2 usage error, 3 input not found.
"""

from __future__ import annotations

import shutil
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: mock_extractor.py INPUT_FILE [INPUT_FILE ...] OUTPUT_FILE", file=sys.stderr)
        return 2
    *inputs, output = argv
    try:
        shutil.copyfile(inputs[0], output)
    except FileNotFoundError:
        print(f"mock_extractor: input not found: {inputs[0]}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
