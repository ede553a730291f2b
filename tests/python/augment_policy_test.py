"""The policies (rand_augment, trivial_augment_wide, auto_augment, aug_mix), random_perspective
and the combinators against torchvision (Debian's python3-torchvision 0.14, v1 API, run with
/usr/bin/python3): given the parameters Stoker drew (stoker._stoker.draw_params, the ops' own
draw code), torchvision's functional API or the transform itself (its random calls replaced by
those parameters) gives the same image, on a real photograph (skimage's chelsea.png) and on
edge cases (1x1, odd sizes, gray). Tolerances: uint8 within one level and float32 within 1e-4
for one operation; a chain of operations (rand_augment's num_ops=2, auto_augment's sub-policies,
aug_mix) may carry an earlier one-level difference through a later threshold (posterize,
solarize, equalize), so there at most 2% of values may differ by more than one level.
random_perspective: torchvision solves for the 8 coefficients in float32 (LAPACK's sgels),
Stoker in double; given the same coefficients the warp is equal (nearest exactly, bilinear
within one level, float32 within 1e-4), and torchvision's own coefficients are within 1e-3. Also the translator on torchvision's reference recipes.

    /usr/bin/python3 tests/python/augment_policy_test.py BUILD_DIR
"""

import math
import os
import sys
import unittest
from unittest import mock

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision.transforms as T  # noqa: E402
import torchvision.transforms.autoaugment as autoaugment  # noqa: E402
import torchvision.transforms.functional as F  # noqa: E402
from skimage import data  # noqa: E402

import stoker  # noqa: E402
from stoker import _stoker  # noqa: E402

NEAREST, BILINEAR = F.InterpolationMode.NEAREST, F.InterpolationMode.BILINEAR
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
RA_OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness",
          "Color", "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"]
AUGMIX_OPS = ["ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Posterize", "Solarize",
              "AutoContrast", "Equalize", "Brightness", "Color", "Contrast", "Sharpness"]


def images():
    rng = np.random.default_rng(3)
    yield "chelsea", np.ascontiguousarray(data.chelsea()[:120, :97])
    yield "1x1", rng.integers(0, 256, (1, 1, 3), dtype=np.uint8)
    yield "odd 7x5", rng.integers(0, 256, (7, 5, 3), dtype=np.uint8)
    yield "gray 9x4", rng.integers(0, 256, (9, 4, 1), dtype=np.uint8)


def chw(pixels):
    return torch.from_numpy(pixels).permute(2, 0, 1).contiguous()


def params(op, pixels, count, first=0):
    h, w, c = pixels.shape
    return _stoker.draw_params(op, h, w, c, False, 0, 0, first, count)


class PolicyTest(unittest.TestCase):
    def assert_close(self, ours, expected, label, chain=False):
        diff = (ours.int() - expected.int()).abs()
        if not chain:
            self.assertLessEqual(diff.max().item(), 1, label)
            return
        self.assertLessEqual((diff > 1).float().mean().item(), 0.02, label)

    def test_rand_augment_single_operations(self):
        for label, pixels in images():
            tensor = chw(pixels)
            for flag, mode in ((0, NEAREST), (1, BILINEAR)):
                for magnitude in (0, 9, 30):
                    text = f"rand_augment(num_ops=1, magnitude={magnitude}, bilinear={flag})"
                    seen = set()
                    for i, (index, _, value) in enumerate(params(text, pixels, 150)):
                        seen.add(int(index))
                        ours = stoker.run_pipeline(text, pixels, index=i)
                        expected = autoaugment._apply_op(tensor, RA_OPS[int(index)], value, mode,
                                                         None)
                        self.assert_close(ours, expected, (label, text, RA_OPS[int(index)], value))
                    self.assertEqual(len(seen), 14)

    def test_rand_augment_chains_and_fill(self):
        pixels = dict(images())["chelsea"]
        tensor = chw(pixels)
        text = "rand_augment(num_ops=2, magnitude=12, bilinear=1, fill=[10, 200, 30])"
        for i, p in enumerate(params(text, pixels, 120)):
            expected = tensor
            for k in range(2):
                expected = autoaugment._apply_op(expected, RA_OPS[int(p[3 * k])], p[3 * k + 2],
                                                 BILINEAR, [10.0, 200.0, 30.0])
            self.assert_close(stoker.run_pipeline(text, pixels, index=i), expected, i, chain=True)

    def test_trivial_augment_wide(self):
        for label, pixels in images():
            tensor = chw(pixels)
            text = "trivial_augment_wide"
            for i, (index, _, value) in enumerate(params(text, pixels, 200)):
                expected = autoaugment._apply_op(tensor, RA_OPS[int(index)], value, NEAREST, None)
                self.assert_close(stoker.run_pipeline(text, pixels, index=i), expected,
                                  (label, RA_OPS[int(index)], value))

    def test_auto_augment_is_torchvisions_forward_given_get_params(self):
        for label, pixels in images():
            tensor = chw(pixels)
            for flag, mode in ((0, NEAREST), (1, BILINEAR)):
                text = f"auto_augment(bilinear={flag})"
                transform = T.AutoAugment(T.AutoAugmentPolicy.IMAGENET, interpolation=mode)
                for i, (policy, p0, p1, s0, s1) in enumerate(params(text, pixels, 150)):
                    transform.get_params = lambda n, d=(policy, p0, p1, s0, s1): (
                        int(d[0]), torch.tensor([d[1], d[2]]), torch.tensor([int(d[3]), int(d[4])]))
                    self.assert_close(stoker.run_pipeline(text, pixels, index=i), transform(tensor),
                                      (label, text, i), chain=True)

    def test_aug_mix_is_torchvisions_forward_given_the_draws(self):
        for label, pixels in images():
            tensor = chw(pixels)
            for text, transform in [
                    ("aug_mix", T.AugMix()),
                    ("aug_mix(severity=10, mixture_width=2, chain_depth=2, alpha=0.5, all_ops=0, "
                     "bilinear=0)", T.AugMix(10, 2, 2, 0.5, False, NEAREST))]:
                width = transform.mixture_width
                for i, p in enumerate(params(text, pixels, 40)):
                    dirichlet = [torch.tensor([[p[0], p[1]]]), torch.tensor([p[2:2 + width]])]
                    transform._sample_dirichlet = lambda _, d=dirichlet: d.pop(0)
                    randints = []
                    rest = p[2 + width:]
                    while rest:
                        depth = int(rest[0])
                        if transform.chain_depth <= 0:
                            randints.append(depth)
                        for s in range(depth):
                            index, bin_, value = rest[1 + 3 * s:4 + 3 * s]
                            op = AUGMIX_OPS[int(index)]
                            randints.append(int(index))
                            if op not in ("AutoContrast", "Equalize"):
                                randints.append(int(bin_))
                            if op in ("ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate",
                                      "Brightness", "Color", "Contrast", "Sharpness"):
                                randints.append(int(math.copysign(1, value) < 0))
                        rest = rest[1 + 3 * depth:]
                    with mock.patch.object(torch, "randint",
                                           lambda *a, r=randints, **k: torch.tensor([r.pop(0)])):
                        expected = transform(tensor)
                    self.assertEqual(randints, [])
                    self.assert_close(stoker.run_pipeline(text, pixels, index=i), expected,
                                      (label, text, i), chain=True)

    def test_policies_refuse_float_and_rgba(self):
        for text in ("rand_augment", "trivial_augment_wide", "auto_augment", "aug_mix"):
            with self.assertRaisesRegex(stoker.InvalidArgumentError, "requires uint8 input"):
                stoker.run_pipeline("to_float, " + text, np.zeros((4, 4, 3), np.uint8))
            with self.assertRaisesRegex(stoker.InvalidArgumentError, "requires 1 or 3 channels"):
                stoker.run_pipeline(text, np.zeros((4, 4, 4), np.uint8))


def perspective_coefficients(start, end):
    """_get_perspective_coeffs' system, solved in double (torchvision solves it in float32)."""
    a, b = [], []
    for (ex, ey), (sx, sy) in zip(end, start):
        a += [[ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey], [0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey]]
        b += [sx, sy]
    return np.linalg.solve(np.array(a, float), np.array(b, float)).astype(np.float32).tolist()


class PerspectiveTest(unittest.TestCase):
    def test_equals_torchvision_perspective_given_the_end_points(self):
        from torchvision.transforms import functional_tensor as FT
        rgba = np.random.default_rng(8).integers(0, 256, (11, 6, 4), dtype=np.uint8)
        for label, pixels in list(images()) + [("rgba 11x6", rgba)]:
            tensor = chw(pixels)
            h, w = pixels.shape[:2]
            start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
            for flag, mode in ((0, "nearest"), (1, "bilinear")):
                for fill_text, fill in (("", 0), (", fill=[77]", 77)):
                    text = f"random_perspective(distortion_scale=0.6, p=0.8, bilinear={flag}{fill_text})"
                    applied = 0
                    for i, p in enumerate(params(text, pixels, 30)):
                        ours = stoker.run_pipeline(text, pixels, index=i)
                        if p[0] == 0 or h == 1 or w == 1:
                            self.assertTrue(torch.equal(ours, tensor), (label, text, i))
                            continue
                        applied += 1
                        end = [[int(p[1 + 2 * k]), int(p[2 + 2 * k])] for k in range(4)]
                        # torchvision's coefficients are these, rounded by its float32 solve.
                        theirs = F._get_perspective_coeffs(start, end)
                        coefficients = perspective_coefficients(start, end)
                        self.assertLess(np.abs(np.subtract(theirs, coefficients)).max(), 1e-3)
                        fills = [float(fill)] * pixels.shape[2]
                        expected = FT.perspective(tensor, coefficients, mode, fills)
                        limit = 0 if mode == "nearest" else 1
                        self.assertLessEqual((ours.int() - expected.int()).abs().max().item(),
                                             limit, (label, text, i))
                        ours = stoker.run_pipeline("to_float, " + text.replace("[77]", "[0.3]"),
                                                   pixels, index=i)
                        expected = FT.perspective(tensor.float() / 255, coefficients, mode,
                                                  [0.3 if fill else 0.0] * pixels.shape[2])
                        self.assertLessEqual((ours - expected).abs().max().item(), 1e-4)
                    if h > 1 and w > 1:
                        self.assertGreater(applied, 10)

    def test_random_perspective_transform_end_to_end(self):
        # The transform itself with its get_params replaced by Stoker's draw: bilinear within
        # one level except where torchvision's float32 coefficients move a sample.
        pixels = dict(images())["chelsea"]
        tensor = chw(pixels)
        transform = T.RandomPerspective(0.5, p=1.0)
        for i, p in enumerate(params("random_perspective(p=1)", pixels, 10)):
            end = [[int(p[1 + 2 * k]), int(p[2 + 2 * k])] for k in range(4)]
            transform.get_params = lambda w, h, d, e=end: ([[0, 0], [w - 1, 0], [w - 1, h - 1],
                                                            [0, h - 1]], e)
            diff = (stoker.run_pipeline("random_perspective(p=1)", pixels, index=i).int() -
                    transform(tensor).int()).abs()
            self.assertLessEqual((diff > 1).float().mean().item(), 0.005, i)


class CombinatorTest(unittest.TestCase):
    def test_outputs_follow_the_drawn_choices(self):
        pixels = dict(images())["chelsea"]
        tensor = chw(pixels)
        functions = [F.invert, F.vflip, lambda x: F.solarize(x, 100), lambda x: F.posterize(x, 3)]
        ops = "invert(p=1), vertical_flip(p=1), solarize(threshold=100, p=1), posterize(bits=3, p=1)"
        for text in (f"random_apply(ops=[{ops}], p=0.4)", f"random_choice(ops=[{ops}])",
                     f"random_choice(ops=[{ops}], p=[1, 0, 2, 5])", f"random_order(ops=[{ops}])"):
            for i, chosen in enumerate(params(text, pixels, 40)):
                expected = tensor
                for k in chosen:
                    expected = functions[int(k)](expected)
                self.assertTrue(torch.equal(stoker.run_pipeline(text, pixels, index=i), expected),
                                (text, chosen))


class RecipeTranslationTest(unittest.TestCase):
    def preset_train(self, policy=None, random_erase_prob=0.0, crop_size=224):
        """references/classification/presets.py ClassificationPresetTrain (torchvision 0.14)."""
        class ClassificationPresetTrain:
            def __init__(self):
                trans = [T.RandomResizedCrop(crop_size, interpolation=BILINEAR),
                         T.RandomHorizontalFlip(0.5)]
                if policy == "ra":
                    trans.append(T.RandAugment(interpolation=BILINEAR, magnitude=9))
                elif policy == "ta_wide":
                    trans.append(T.TrivialAugmentWide(interpolation=BILINEAR))
                elif policy == "augmix":
                    trans.append(T.AugMix(interpolation=BILINEAR, severity=3))
                elif policy is not None:
                    trans.append(T.AutoAugment(policy=T.AutoAugmentPolicy(policy),
                                               interpolation=BILINEAR))
                trans.extend([T.PILToTensor(), T.ConvertImageDtype(torch.float),
                              T.Normalize(mean=MEAN, std=STD)])
                if random_erase_prob > 0:
                    trans.append(T.RandomErasing(p=random_erase_prob))
                self.transforms = T.Compose(trans)

            def __call__(self, img):
                return self.transforms(img)
        return ClassificationPresetTrain()

    def test_reference_presets_translate_and_run(self):
        expected = {
            "ra": "rand_augment(num_ops=2, magnitude=9, num_magnitude_bins=31, bilinear=1, fill=[])",
            "ta_wide": "trivial_augment_wide(num_magnitude_bins=31, bilinear=1, fill=[])",
            "augmix": "aug_mix(severity=3, mixture_width=3, chain_depth=-1, alpha=1, all_ops=1, "
                      "bilinear=1, fill=[])",
            "imagenet": "auto_augment(policy=0, bilinear=1, fill=[])",
        }
        photo = data.chelsea()
        for policy, op in expected.items():
            pipeline = stoker.from_torchvision(self.preset_train(policy, 0.1, crop_size=64))
            self.assertEqual(pipeline.ops[2], op)
            self.assertEqual(pipeline.ops[-1], "random_erasing(p=0.1, scale_min=0.02, "
                             "scale_max=0.33, ratio_min=0.3, ratio_max=3.3, value=[0])")
            out = stoker.run_pipeline(pipeline, photo, index=4)
            self.assertEqual(tuple(out.shape), (3, 64, 64))
            self.assertEqual(out.dtype, torch.float32)

    def test_timm_default_train_transforms(self):
        for middle, op in [(T.RandAugment(2, 9), "rand_augment(num_ops=2, magnitude=9, "
                                                  "num_magnitude_bins=31, bilinear=0, fill=[])"),
                           (T.ColorJitter(0.4, 0.4, 0.4),
                            "color_jitter(brightness=0.4, contrast=0.4, saturation=0.4)")]:
            timm = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), middle,
                              T.ToTensor(), T.Normalize(MEAN, STD), T.RandomErasing(0.25)])
            pipeline = stoker.from_torchvision(timm)
            self.assertEqual(pipeline.ops[2], op)
            self.assertEqual(len(pipeline.ops), 6)
            self.assertEqual(tuple(stoker.run_pipeline(pipeline, data.chelsea()).shape),
                             (3, 224, 224))

    def test_combinators_translate_with_nested_positions(self):
        transform = T.Compose([
            T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
            T.RandomChoice([T.RandomInvert(1.0),
                            T.Compose([T.RandomSolarize(128, 1.0), T.RandomEqualize(1.0)])],
                           p=[1, 2]),
            T.RandomOrder([T.RandomVerticalFlip(), T.RandomPerspective(0.3, fill=5)])])
        self.assertEqual(stoker.from_torchvision(transform).ops, [
            "random_apply(ops=[color_jitter(brightness=0.4, contrast=0.4, saturation=0.4, "
            "hue=0.1)], p=0.8)",
            "random_choice(ops=[invert(p=1), random_apply(ops=[solarize(threshold=128, p=1), "
            "equalize(p=1)], p=1)], p=[1, 2])",
            "random_order(ops=[vertical_flip(p=0.5), random_perspective(distortion_scale=0.3, "
            "p=0.5, bilinear=1, fill=[5])])"])
        with self.assertRaisesRegex(ValueError, "GaussianBlur at position 0.1"):
            stoker.from_torchvision(T.RandomApply([T.RandomInvert(), T.GaussianBlur(3)]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
