"""Generate the small synthetic images of the vision example (evals/vision/images/).

Pure standard library (PNG via zlib), deterministic: running it again rewrites identical files.

    python scripts/make_vision_images.py [--out evals/vision/images]
"""

from __future__ import annotations

import argparse
import math
import struct
import zlib
from pathlib import Path

RGB = tuple[int, int, int]
WHITE, BLACK, GREY = (255, 255, 255), (20, 20, 20), (150, 150, 150)
RED, GREEN, BLUE, BROWN, SKY, YELLOW = (
    (210, 40, 40),
    (40, 150, 60),
    (40, 80, 200),
    (120, 80, 40),
    (170, 210, 240),
    (240, 200, 40),
)

# 5x7 glyphs for the characters the images print.
FONT = {
    "A": ["01110", "10001", "10001", "11111", "10001", "10001", "10001"],
    "C": ["01110", "10001", "10000", "10000", "10000", "10001", "01110"],
    "D": ["11110", "10001", "10001", "10001", "10001", "10001", "11110"],
    "E": ["11111", "10000", "10000", "11110", "10000", "10000", "11111"],
    "I": ["01110", "00100", "00100", "00100", "00100", "00100", "01110"],
    "J": ["00111", "00010", "00010", "00010", "00010", "10010", "01100"],
    "K": ["10001", "10010", "10100", "11000", "10100", "10010", "10001"],
    "L": ["10000", "10000", "10000", "10000", "10000", "10000", "11111"],
    "M": ["10001", "11011", "10101", "10101", "10001", "10001", "10001"],
    "N": ["10001", "11001", "10101", "10011", "10001", "10001", "10001"],
    "O": ["01110", "10001", "10001", "10001", "10001", "10001", "01110"],
    "P": ["11110", "10001", "10001", "11110", "10000", "10000", "10000"],
    "Q": ["01110", "10001", "10001", "10001", "10101", "10010", "01101"],
    "R": ["11110", "10001", "10001", "11110", "10100", "10010", "10001"],
    "S": ["01111", "10000", "10000", "01110", "00001", "00001", "11110"],
    "T": ["11111", "00100", "00100", "00100", "00100", "00100", "00100"],
    "U": ["10001", "10001", "10001", "10001", "10001", "10001", "01110"],
    "V": ["10001", "10001", "10001", "10001", "10001", "01010", "00100"],
    "0": ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
    "1": ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
    "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    "3": ["11110", "00001", "00001", "01110", "00001", "00001", "11110"],
    "4": ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
    "5": ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
    "6": ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
    "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    "8": ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
    "9": ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
    "$": ["00100", "01111", "10100", "01110", "00101", "11110", "00100"],
    "%": ["11001", "11010", "00010", "00100", "01000", "01011", "10011"],
    ".": ["00000", "00000", "00000", "00000", "00000", "01100", "01100"],
    ",": ["00000", "00000", "00000", "00000", "01100", "00100", "01000"],
    ":": ["00000", "01100", "01100", "00000", "01100", "01100", "00000"],
    "+": ["00000", "00100", "00100", "11111", "00100", "00100", "00000"],
    "#": ["01010", "01010", "11111", "01010", "11111", "01010", "01010"],
    "?": ["01110", "10001", "00001", "00010", "00100", "00000", "00100"],
    " ": ["00000"] * 7,
}


class Canvas:
    def __init__(self, width: int, height: int, background: RGB = WHITE) -> None:
        self.width, self.height = width, height
        self.pixels = [list(background) * width for _ in range(height)]

    def dot(self, x: int, y: int, colour: RGB) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            self.pixels[y][3 * x : 3 * x + 3] = colour

    def rect(self, x0: int, y0: int, x1: int, y1: int, colour: RGB) -> None:
        for y in range(max(0, y0), min(self.height, y1)):
            for x in range(max(0, x0), min(self.width, x1)):
                self.pixels[y][3 * x : 3 * x + 3] = colour

    def circle(self, cx: int, cy: int, r: int, colour: RGB) -> None:
        for y in range(cy - r, cy + r + 1):
            for x in range(cx - r, cx + r + 1):
                if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
                    self.dot(x, y, colour)

    def line(self, x0: int, y0: int, x1: int, y1: int, colour: RGB, width: int = 2) -> None:
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            x, y = round(x0 + (x1 - x0) * i / steps), round(y0 + (y1 - y0) * i / steps)
            self.rect(x - width // 2, y - width // 2, x + (width + 1) // 2, y + (width + 1) // 2, colour)

    def text(self, x: int, y: int, text: str, colour: RGB = BLACK, scale: int = 2) -> None:
        for ch in text.upper():
            for row, bits in enumerate(FONT[ch]):
                for col, bit in enumerate(bits):
                    if bit == "1":
                        self.rect(
                            x + col * scale, y + row * scale, x + (col + 1) * scale, y + (row + 1) * scale, colour
                        )
            x += 6 * scale

    def png(self) -> bytes:
        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        raw = b"".join(b"\x00" + bytes(row) for row in self.pixels)
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
        )


def office() -> Canvas:
    """A desk with a monitor, a potted plant and a window."""
    c = Canvas(200, 140)
    c.rect(120, 10, 190, 60, SKY)  # window
    c.line(155, 10, 155, 60, GREY, 2)
    c.rect(10, 90, 190, 100, BROWN)  # desk top
    c.rect(20, 100, 28, 140, BROWN)
    c.rect(172, 100, 180, 140, BROWN)
    c.rect(50, 45, 110, 82, BLACK)  # monitor
    c.rect(54, 49, 106, 78, BLUE)
    c.rect(76, 82, 84, 90, GREY)
    c.rect(140, 75, 156, 90, BROWN)  # pot
    c.circle(148, 66, 11, GREEN)  # plant
    return c


def shelf() -> Canvas:
    """Five bottles and three cans on a shelf."""
    c = Canvas(200, 100)
    c.rect(0, 80, 200, 86, BROWN)
    for i in range(5):
        x = 8 + i * 20
        c.rect(x, 40, x + 12, 80, BLUE)
        c.rect(x + 4, 30, x + 8, 40, BLUE)
    for i in range(3):
        x = 115 + i * 26
        c.rect(x, 58, x + 18, 80, RED)
    return c


def scene(after: bool) -> Canvas:
    """Before: a red square at the left and a green circle. After: the square moved right, a blue
    triangle-ish block appeared at the top, the circle is unchanged."""
    c = Canvas(160, 120)
    c.circle(120, 85, 16, GREEN)
    if after:
        c.rect(80, 20, 110, 50, RED)
        c.rect(20, 80, 50, 92, BLUE)
    else:
        c.rect(15, 20, 45, 50, RED)
    return c


def sign() -> Canvas:
    c = Canvas(320, 70, (245, 245, 235))
    c.rect(6, 6, 314, 64, (60, 60, 60))
    c.rect(9, 9, 311, 61, (245, 245, 235))
    c.text(22, 20, "PROJECT PROPOSAL", BLACK, 2)
    c.text(22, 40, "Q1 2026", RED, 2)
    return c


def chart() -> Canvas:
    """Quarterly revenue bars with their values, and the growth in Q4."""
    c = Canvas(260, 170)
    values = [("Q1", 1.2), ("Q2", 1.1), ("Q3", 1.5), ("Q4", 1.8)]  # Q4 is +20% on Q3
    c.line(20, 140, 250, 140, BLACK, 1)
    for i, (quarter, value) in enumerate(values):
        x = 30 + i * 56
        top = 140 - int(value * 55)
        c.rect(x, top, x + 34, 140, BLUE)
        c.text(x + 4, 146, quarter, BLACK, 2)
        c.text(x - 2, top - 12, f"${value}M", BLACK, 1)
    c.text(150, 8, "Q4 +20%", GREEN, 2)
    return c


def form() -> Canvas:
    c = Canvas(240, 110, (250, 250, 250))
    c.text(10, 10, "INVOICE #1042", BLACK, 2)
    c.text(10, 40, "DATE: 2026.03.15", BLACK, 1)
    c.text(10, 58, "ITEMS: 3", BLACK, 1)
    c.text(10, 80, "TOTAL: $1,250.00", RED, 2)
    return c


def activity() -> Canvas:
    """Two stick figures passing a ball; the left one has an arm raised."""
    c = Canvas(200, 130)
    c.rect(0, 115, 200, 130, GREEN)
    for x, raised in ((50, True), (150, False)):
        c.circle(x, 40, 9, BLACK)
        c.line(x, 49, x, 85, BLACK)
        c.line(x, 85, x - 12, 115, BLACK)
        c.line(x, 85, x + 12, 115, BLACK)
        c.line(x, 60, x - 15, 75, BLACK)
        if raised:
            c.line(x, 60, x + 18, 40, BLACK)
        else:
            c.line(x, 60, x - 18, 50, BLACK)
    c.circle(100, 35, 6, RED)
    return c


def pattern() -> Canvas:
    """Rows of 1, 2 and 3 dots, then a question mark: the next row should have 4."""
    c = Canvas(160, 140)
    for row in range(3):
        for i in range(row + 1):
            c.circle(20 + i * 24, 20 + row * 32, 8, BLUE)
    c.text(20, 108, "?", BLACK, 3)
    return c


def landscape() -> Canvas:
    """A sky gradient over a horizon with a sun: a simple 'photo' for quality assessment."""
    c = Canvas(200, 120)
    for y in range(120):
        shade = 150 + int(90 * y / 120) if y < 75 else 0
        colour = (shade // 2, shade * 3 // 4, shade) if y < 75 else (40, 110 + (y - 75), 50)
        c.rect(0, y, 200, y + 1, colour)
    c.circle(150, 35, 14, YELLOW)
    for x in range(0, 200, 4):
        c.dot(x, 75 + int(3 * math.sin(x / 9)), (30, 90, 40))
    return c


IMAGES = {
    "office.png": office,
    "shelf.png": shelf,
    "scene-before.png": lambda: scene(False),
    "scene-after.png": lambda: scene(True),
    "sign.png": sign,
    "chart.png": chart,
    "form.png": form,
    "activity.png": activity,
    "pattern.png": pattern,
    "landscape.png": landscape,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "evals" / "vision" / "images"))
    out = Path(parser.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    for name, draw in IMAGES.items():
        data = draw().png()
        (out / name).write_bytes(data)
        print(f"{out / name}  {len(data):,} bytes")


if __name__ == "__main__":
    main()
