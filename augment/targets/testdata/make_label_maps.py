#!/usr/bin/python3
"""Writes the label map PNGs of target_codec_test (semantic masks) with PIL, as datasets store
them: label_maps/palette.png, a 4x6 palette image (mode "P", 4-bit) whose indices are the labels
0..5 and whose palette colours are not; label_maps/gray16.png, the same labels as 16-bit gray (a
bit depth Stoker refuses). Run from this folder: /usr/bin/python3 make_label_maps.py
"""
import os

from PIL import Image

LABELS = [[(x + y) % 6 for x in range(6)] for y in range(4)]


def main():
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "label_maps")
    os.makedirs(out_dir, exist_ok=True)
    palette = Image.new("P", (6, 4))
    palette.putdata([v for row in LABELS for v in row])
    palette.putpalette([c for i in range(16) for c in (40 * i % 256, 200 - 10 * i, 7 * i)])
    palette.save(os.path.join(out_dir, "palette.png"), bits=4)
    gray16 = Image.new("I;16", (6, 4))
    gray16.putdata([v for row in LABELS for v in row])
    gray16.save(os.path.join(out_dir, "gray16.png"))


if __name__ == "__main__":
    main()
