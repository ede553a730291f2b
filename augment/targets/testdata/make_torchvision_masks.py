#!/usr/bin/python3
"""Writes the expected masks of mask_torchvision_test: torchvision 0.14's functional ops on
tensors with NEAREST interpolation (what torchvision.transforms.v2 runs on a Mask), applied to a
37x53 uint8 mask of a few shapes with several class ids; the cases that bring in pixels from
outside the image again with fill=255, a semantic mask's fill.

Run with Debian's /usr/bin/python3 (python3-torchvision) from this folder:
    /usr/bin/python3 make_torchvision_masks.py
Each case is written raw (row-major uint8, the output's height x width) to torchvision/NAME.bin;
the input is torchvision/input.bin. The case list must match mask_torchvision_test.cc's.
"""
import os

import torch
import torchvision.transforms.functional as F
from torchvision.transforms import InterpolationMode

H, W = 37, 53
NEAREST = InterpolationMode.NEAREST


def input_mask():
    m = torch.zeros((H, W), dtype=torch.uint8)
    m[3:15, 4:20] = 1  # a rectangle
    ys, xs = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
    m[((ys - 24) ** 2 + (xs - 35) ** 2) < 81] = 2  # a disc
    m[(ys + xs > 60) & (ys < 34) & (xs < 50)] = 3  # a triangle
    m[0, W - 1] = 4  # a corner pixel
    return m


def main():
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchvision")
    os.makedirs(out_dir, exist_ok=True)
    mask = input_mask()[None]  # 1 x H x W, as v2 passes a Mask
    start = [[0, 0], [W - 1, 0], [W - 1, H - 1], [0, H - 1]]
    end = [[3, 2], [W - 5, 4], [W - 2, H - 6], [6, H - 1]]
    cases = {
        "input": mask,
        "resize_23x71": F.resize(mask, [23, 71], NEAREST),
        "resize_74x106": F.resize(mask, [74, 106], NEAREST),
        "resize_50x40": F.resize(mask, [50, 40], NEAREST),
        "resize_16x16": F.resize(mask, [16, 16], NEAREST),
        "crop_4_6_20x30": F.crop(mask, 4, 6, 20, 30),
        "hflip": F.hflip(mask),
        "vflip": F.vflip(mask),
        "pad_constant": F.pad(mask, [3, 5, 7, 2], fill=0, padding_mode="constant"),
        "pad_edge": F.pad(mask, [3, 5, 7, 2], padding_mode="edge"),
        "pad_reflect": F.pad(mask, [3, 5, 7, 2], padding_mode="reflect"),
        "pad_symmetric": F.pad(mask, [3, 5, 7, 2], padding_mode="symmetric"),
        "affine": F.affine(mask, angle=30.0, translate=[5, -3], scale=1.2, shear=[10.0, 5.0],
                           interpolation=NEAREST),
        "rotate_25": F.rotate(mask, 25.0, interpolation=NEAREST),
        "perspective": F.perspective(mask, start, end, interpolation=NEAREST),
        # A semantic mask's fill, 255 ("ignore"), where pixels come from outside the image.
        "pad_constant_fill255": F.pad(mask, [3, 5, 7, 2], fill=255, padding_mode="constant"),
        "affine_fill255": F.affine(mask, angle=30.0, translate=[5, -3], scale=1.2,
                                   shear=[10.0, 5.0], interpolation=NEAREST, fill=255),
        "rotate_25_fill255": F.rotate(mask, 25.0, interpolation=NEAREST, fill=255),
        "perspective_fill255": F.perspective(mask, start, end, interpolation=NEAREST, fill=255),
    }
    for name, value in cases.items():
        with open(os.path.join(out_dir, name + ".bin"), "wb") as f:
            f.write(value.contiguous().numpy().tobytes())


if __name__ == "__main__":
    main()
