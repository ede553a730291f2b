"""Stoker's ops against torchvision.transforms.functional on the same input (Debian's
python3-torchvision and python3-skimage, run with /usr/bin/python3): each op with p=1 through
stoker.run_pipeline (the workers' executor) gives torchvision's output, uint8 within one level
and float32 within 1e-4, on a real photograph (skimage's chelsea.png), through both of
torchvision's paths (PIL images and tensors), and on synthetic edge cases (1x1, odd sizes,
gray, RGBA).

    /usr/bin/python3 tests/python/augment_equivalence_test.py BUILD_DIR
"""

import os
import sys
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision.transforms.functional as F  # noqa: E402
from PIL import Image  # noqa: E402
from skimage import data  # noqa: E402

import stoker  # noqa: E402

# (Stoker op with p=1, torchvision functional, whether PIL images take it).
UINT8_OPS = [
    ("vertical_flip(p=1)", F.vflip),
    ("horizontal_flip(p=1)", F.hflip),
    ("invert(p=1)", F.invert),
    ("posterize(bits=3, p=1)", lambda x: F.posterize(x, 3)),
    ("posterize(bits=0, p=1)", lambda x: F.posterize(x, 0)),
    ("posterize(bits=8, p=1)", lambda x: F.posterize(x, 8)),
    ("solarize(threshold=128, p=1)", lambda x: F.solarize(x, 128)),
    ("solarize(threshold=0, p=1)", lambda x: F.solarize(x, 0)),
    ("autocontrast(p=1)", F.autocontrast),
    ("equalize(p=1)", F.equalize),
    ("adjust_sharpness(sharpness_factor=2, p=1)", lambda x: F.adjust_sharpness(x, 2.0)),
    ("adjust_sharpness(sharpness_factor=0.3, p=1)", lambda x: F.adjust_sharpness(x, 0.3)),
    ("random_grayscale(p=1)", lambda x: F.rgb_to_grayscale(x, 3)),
]
FLOAT_OPS = [
    ("vertical_flip(p=1)", F.vflip),
    ("invert(p=1)", F.invert),
    ("solarize(threshold=0.5, p=1)", lambda x: F.solarize(x, 0.5)),
    ("autocontrast(p=1)", F.autocontrast),
    ("adjust_sharpness(sharpness_factor=2.5, p=1)", lambda x: F.adjust_sharpness(x, 2.5)),
    ("random_grayscale(p=1)", lambda x: F.rgb_to_grayscale(x, 3)),
]
RGB_ONLY = {"random_grayscale(p=1)"}


def edge_cases():
    rng = np.random.default_rng(11)
    yield "1x1", rng.integers(0, 256, (1, 1, 3), dtype=np.uint8)
    yield "odd 7x5", rng.integers(0, 256, (7, 5, 3), dtype=np.uint8)
    yield "gray 9x4", rng.integers(0, 256, (9, 4, 1), dtype=np.uint8)
    yield "rgba 6x3", rng.integers(0, 256, (6, 3, 4), dtype=np.uint8)
    yield "constant", np.full((4, 4, 3), 77, dtype=np.uint8)
    yield "narrow range", rng.integers(100, 104, (5, 8, 3), dtype=np.uint8)


def per_channel_group(functional, tensor):
    """torchvision's tone functionals take 1 or 3 channels: RGBA as RGB, then alpha alone."""
    if tensor.shape[0] != 4:
        return functional(tensor)
    return torch.cat([functional(tensor[:3]), functional(tensor[3:])])


class EquivalenceTest(unittest.TestCase):
    def check_uint8(self, pixels, label):
        tensor = torch.from_numpy(pixels).permute(2, 0, 1).contiguous()
        for op, functional in UINT8_OPS:
            if op in RGB_ONLY and pixels.shape[2] != 3:
                continue
            ours = stoker.run_pipeline(op, pixels)
            expected = per_channel_group(functional, tensor)
            self.assertEqual(ours.shape, expected.shape, (label, op))
            diff = (ours.int() - expected.int()).abs().max().item()
            self.assertLessEqual(diff, 1, (label, op, "tensor path"))

    def check_float(self, pixels, label):
        tensor = torch.from_numpy(pixels).permute(2, 0, 1).float() / 255
        for op, functional in FLOAT_OPS:
            if op in RGB_ONLY and pixels.shape[2] != 3:
                continue
            ours = stoker.run_pipeline("to_float, " + op, pixels)
            diff = (ours - per_channel_group(functional, tensor)).abs().max().item()
            self.assertLessEqual(diff, 1e-4, (label, op))

    def test_photo_tensor_path(self):
        photo = np.ascontiguousarray(data.chelsea())
        self.check_uint8(photo, "chelsea")
        self.check_float(photo, "chelsea")

    def test_photo_pil_path(self):
        photo = data.chelsea()
        image = Image.fromarray(photo)
        for op, functional in UINT8_OPS:
            ours = stoker.run_pipeline(op, photo)
            expected = torch.from_numpy(np.asarray(functional(image))).permute(2, 0, 1)
            diff = (ours.int() - expected.int()).abs().max().item()
            self.assertLessEqual(diff, 1, (op, "PIL path"))

    def test_antialiased_resize_equals_pil(self):
        # torchvision resizes PIL images with PIL's bilinear filter: resize(interpolation=2)
        # is PIL's fixed-point arithmetic, so the bytes are equal.
        photo = data.chelsea()  # 300 x 451
        for label, pixels in [("chelsea", photo)] + list(edge_cases()):
            if pixels.shape[2] == 4:
                continue  # PIL resizes RGBA premultiplied; Stoker has no alpha semantics
            image = Image.fromarray(pixels[..., 0] if pixels.shape[2] == 1 else pixels)
            h, w = pixels.shape[:2]
            for size in [(max(1, h // 3), max(1, w // 2 + 1)), (2 * h + 1, w + 3), (1, 1),
                         (h, max(1, w - 1))]:
                text = f"resize(height={size[0]}, width={size[1]}, interpolation=2)"
                ours = stoker.run_pipeline(text, pixels)
                expected = np.asarray(F.resize(image, list(size)))
                expected = torch.from_numpy(expected.reshape(size[0], size[1], -1)).permute(2, 0, 1)
                diff = (ours.int() - expected.int()).abs().max().item()
                self.assertEqual(diff, 0, (label, size))  # PIL's arithmetic, exactly

    def test_random_resized_crop_antialiased_equals_pil(self):
        # The crop window is resized straight from the photo (no copy of the crop): the bytes
        # equal torchvision's resized_crop on the PIL image, given the window Stoker drew.
        op = "random_resized_crop(height=224, width=224, interpolation=2)"
        for name in ["chelsea", "astronaut", "coffee"]:
            photo = np.ascontiguousarray(getattr(data, name)())
            image = Image.fromarray(photo)
            h, w, c = photo.shape
            windows = stoker._stoker.draw_params(op, h, w, c, False, 0, 0, 0, 12)
            for index, (top, left, height, width) in enumerate(windows):
                ours = stoker.run_pipeline(op, photo, index=index)
                expected = F.resized_crop(image, int(top), int(left), int(height), int(width),
                                          [224, 224])
                expected = torch.from_numpy(np.asarray(expected)).permute(2, 0, 1)
                self.assertTrue(torch.equal(ours, expected), (name, index))

    def test_antialiased_resize_float_equals_torchvision_tensor_path(self):
        photo = np.ascontiguousarray(data.chelsea())
        tensor = torch.from_numpy(photo).permute(2, 0, 1).float() / 255
        for size in [(100, 151), (37, 64), (450, 600)]:
            ours = stoker.run_pipeline(
                f"to_float, resize(height={size[0]}, width={size[1]}, interpolation=2)", photo)
            expected = F.resize(tensor, list(size), antialias=True)
            self.assertLessEqual((ours - expected).abs().max().item(), 1e-4, size)

    def test_pad_modes(self):
        for label, pixels in [("chelsea", np.ascontiguousarray(data.chelsea()[:40, :33]))] + \
                list(edge_cases()):
            tensor = torch.from_numpy(pixels).permute(2, 0, 1).contiguous()
            h, w = pixels.shape[:2]
            for mode, code in [("constant", 0), ("edge", 1), ("reflect", 2), ("symmetric", 3)]:
                limit = min(h, w) - (1 if mode == "reflect" else 0)  # torchvision's limits
                for padding in ([1], [2, 1], [0, 3, 2, 1]):
                    if max(padding) > limit:
                        continue
                    text = f"pad(padding={padding}, fill=[17], padding_mode={code})"
                    ours = stoker.run_pipeline(text, pixels)
                    expected = F.pad(tensor, padding, fill=17, padding_mode=mode)
                    self.assertTrue(torch.equal(ours, expected), (label, mode, padding))
                    ours = stoker.run_pipeline("to_float, " + text.replace("[17]", "[0.25]"),
                                               pixels)
                    expected = F.pad(tensor.float() / 255, padding, fill=0.25, padding_mode=mode)
                    self.assertLessEqual((ours - expected).abs().max().item(), 1e-6)
        # Per-channel fill, as torchvision's PIL path takes it.
        photo = data.chelsea()
        ours = stoker.run_pipeline("pad(padding=[3, 1, 4, 2], fill=[9, 8, 7])", photo)
        expected = np.asarray(F.pad(Image.fromarray(photo), [3, 1, 4, 2], fill=(9, 8, 7)))
        self.assertTrue(torch.equal(ours, torch.from_numpy(expected.copy()).permute(2, 0, 1)))

    def test_random_erasing_equals_erase_with_its_rectangle(self):
        photo = np.ascontiguousarray(data.chelsea())
        tensor = torch.from_numpy(photo).permute(2, 0, 1).float() / 255
        for index in range(20):
            ours = stoker.run_pipeline("to_float, random_erasing(p=1, value=[0.5, 2, -1])",
                                       photo, index=index)
            changed = (ours != tensor).any(0).nonzero()
            if len(changed) == 0:
                continue  # no rectangle fitted in 10 tries
            (top, left), (bottom, right) = changed.min(0).values, changed.max(0).values
            expected = F.erase(tensor, top, left, bottom - top + 1, right - left + 1,
                               torch.tensor([0.5, 2.0, -1.0])[:, None, None])
            self.assertTrue(torch.equal(ours, expected), index)

    def test_random_erasing_area_distribution_matches_torchvision(self):
        # Kolmogorov-Smirnov on the erased area fraction: Stoker's draws against torchvision's
        # get_params, 2,000 each at fixed seeds.
        from scipy.stats import ks_2samp
        import torchvision.transforms as T
        pixels = np.zeros((60, 80, 3), dtype=np.uint8)
        ours = []
        for index in range(2000):
            out = stoker.run_pipeline("random_erasing(p=1, value=[255])", pixels, index=index)
            ours.append((out[0] == 255).float().mean().item())
        torch.manual_seed(0)
        theirs = []
        for _ in range(2000):
            _, _, h, w, _ = T.RandomErasing.get_params(torch.zeros(3, 60, 80), (0.02, 0.33),
                                                       (0.3, 3.3), [255])
            theirs.append(0.0 if (h, w) == (60, 80) else h * w / (60 * 80))
        self.assertGreater(ks_2samp(ours, theirs).pvalue, 0.001)

    def test_adjust_hue_equals_torchvision(self):
        for label, pixels in [("chelsea", np.ascontiguousarray(data.chelsea()))] + \
                [(l, p) for l, p in edge_cases() if p.shape[2] in (1, 3)]:
            tensor = torch.from_numpy(pixels).permute(2, 0, 1).contiguous()
            for factor in (-0.5, -0.2, 0.05, 0.3, 0.5):
                ours = stoker.run_pipeline(f"adjust_hue(hue_factor={factor})", pixels)
                diff = (ours.int() - F.adjust_hue(tensor, factor).int()).abs().max().item()
                self.assertLessEqual(diff, 1, (label, factor))
                ours = stoker.run_pipeline(f"to_float, adjust_hue(hue_factor={factor})", pixels)
                expected = F.adjust_hue(tensor.float() / 255, factor)
                self.assertLessEqual((ours - expected).abs().max().item(), 1e-4, (label, factor))

    def test_affine_and_rotate_equal_torchvision_tensor_path(self):
        nearest, bilinear = F.InterpolationMode.NEAREST, F.InterpolationMode.BILINEAR
        cases = [  # (Stoker args, F.affine args)
            ("angle=30", dict(angle=30, translate=[0, 0], scale=1, shear=[0, 0])),
            ("angle=-12.5, translate=[5, -3], scale=0.8, shear=[10, 4]",
             dict(angle=-12.5, translate=[5, -3], scale=0.8, shear=[10, 4])),
            ("angle=90, scale=1.3", dict(angle=90, translate=[0, 0], scale=1.3, shear=[0, 0])),
        ]
        for label, pixels in [("chelsea", np.ascontiguousarray(data.chelsea()[:120, :97]))] + \
                list(edge_cases()):
            tensor = torch.from_numpy(pixels).permute(2, 0, 1).contiguous()
            for args, kwargs in cases:
                for flag, mode in ((0, nearest), (1, bilinear)):
                    for fill_text, fill in (("", None), (", fill=[40]", [40.0] * pixels.shape[2])):
                        text = f"affine({args}, bilinear={flag}{fill_text})"
                        ours = stoker.run_pipeline(text, pixels)
                        expected = F.affine(tensor, interpolation=mode, fill=fill, **kwargs)
                        diff = (ours.int() - expected.int()).abs().max().item()
                        self.assertLessEqual(diff, 1, (label, text))
                        ours = stoker.run_pipeline("to_float, " + text.replace("[40]", "[0.25]"),
                                                   pixels)
                        expected = F.affine(tensor.float() / 255, interpolation=mode,
                                            fill=None if fill is None else [0.25] * len(fill),
                                            **kwargs)
                        self.assertLessEqual((ours - expected).abs().max().item(), 1e-4,
                                             (label, text))
        # F.rotate(angle) turns the other way: affine(angle=-angle).
        photo = np.ascontiguousarray(data.chelsea())
        tensor = torch.from_numpy(photo).permute(2, 0, 1).contiguous()
        ours = stoker.run_pipeline("affine(angle=-20, bilinear=1)", photo)
        expected = F.rotate(tensor, 20, interpolation=bilinear)
        self.assertLessEqual((ours.int() - expected.int()).abs().max().item(), 1)

    def test_edge_cases(self):
        for label, pixels in edge_cases():
            self.check_uint8(pixels, label)
            self.check_float(pixels, label)

    def test_probability_draws_per_sample(self):
        photo = data.chelsea()
        flipped = [not torch.equal(stoker.run_pipeline("invert(p=0.5)", photo, index=i),
                                   torch.from_numpy(photo).permute(2, 0, 1))
                   for i in range(200)]
        self.assertTrue(60 < sum(flipped) < 140, sum(flipped))
        self.assertTrue(torch.equal(stoker.run_pipeline("invert", photo, seed=1, index=5),
                                    stoker.run_pipeline("invert", photo, seed=1, index=5)))

    def test_bad_arguments_name_the_field(self):
        for text, message in [("posterize(bits=9)", "bits must be <= 8, got 9"),
                              ("to_float, posterize(bits=2)", "requires uint8 input"),
                              ("solarize(threshold=300)", "threshold must be in [0, 255]"),
                              ("to_float, solarize(threshold=2)", "threshold must be in [0, 1]"),
                              ("invert(p=1.5)", "p must be in [0, 1], got 1.5"),
                              ("pad(padding=[1], fill=[1, 2])",
                               "fill takes 1 value or one per channel (3), got 2"),
                              ("pad(padding=[1, 2, 3])", "padding takes 1, 2 or 4 values"),
                              ("affine(bilinear=2)", "bilinear must be 0 or 1"),
                              ("random_erasing(value=[1, 2])", "value takes 1 value or one"),
                              ("adjust_hue(hue_factor=0.7)", "hue_factor must be in [-0.5, 0.5]"),
                              ("color_jitter(hue=0.6)", "hue must be in [0, 0.5]")]:
            with self.assertRaises(stoker.InvalidArgumentError) as raised:
                stoker.run_pipeline(text, np.zeros((4, 4, 3), dtype=np.uint8))
            self.assertIn(message, str(raised.exception), text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
