"""The parameter distributions of Stoker's random ops against torchvision's (Debian's
python3-torchvision 0.14, run with /usr/bin/python3): for every random op, N = 10,000 draws at a
fixed seed through stoker._stoker.draw_params (the test hook of augment/op_params.h: the op's own
draw code) are compared with the analytic distribution torchvision draws from, or with N draws
of torchvision's own get_params, by a chi-square test (discrete parameters) or a
Kolmogorov-Smirnov test (continuous ones). A test passes when p > 0.001; every check also runs
the same statistic against a deliberately wrong distribution, which must give p < 0.001, so
each test is shown able to fail.

    /usr/bin/python3 tests/python/augment_distribution_test.py BUILD_DIR
"""

import itertools
import math
import os
import sys
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision.transforms as T  # noqa: E402
from scipy import stats  # noqa: E402

from stoker import _stoker  # noqa: E402

N = 10_000
ALPHA = 0.001
H, W = 60, 80  # The image the parameters are drawn for.


def draws(op, height=H, width=W, channels=3, is_float=False, seed=1234):
    return _stoker.draw_params(op, height, width, channels, is_float, seed, 0, 0, N)


def torch_draws(fn, n=N, seed=0):
    torch.manual_seed(seed)
    return [fn() for _ in range(n)]


class DistributionTest(unittest.TestCase):
    # --- the statistics, each with its negative control ---------------------------------------
    def chi2_against(self, values, probabilities):
        support = sorted(probabilities)
        counts = np.array([sum(1 for v in values if v == s) for s in support], float)
        self.assertEqual(counts.sum(), len(values), "a value outside the support")
        expected = np.array([probabilities[s] for s in support], float)
        return stats.chisquare(counts, expected / expected.sum() * len(values)).pvalue

    def assert_discrete(self, values, probabilities, wrong, label):
        """values follow {value: probability}; the wrong distribution is rejected."""
        self.assertGreater(self.chi2_against(values, probabilities), ALPHA, label)
        self.assertLess(self.chi2_against(values, wrong), ALPHA, (label, "negative control"))

    def assert_uniform_ints(self, values, low, high, label):
        """Uniform on low..high; the control tilts the probabilities by 50% across the range."""
        support = range(low, high + 1)
        tilt = {v: 1.0 + 0.5 * (v - low) / max(1, high - low) for v in support}
        if high == low:
            tilt = {low: 1.0, low + 1: 0.05}
        self.assert_discrete([int(v) for v in values], {v: 1.0 for v in support}, tilt, label)

    def assert_continuous(self, sample, cdf, wrong_cdf, label):
        self.assertGreater(stats.kstest(sample, cdf).pvalue, ALPHA, label)
        self.assertLess(stats.kstest(sample, wrong_cdf).pvalue, ALPHA, (label, "negative control"))

    def assert_same(self, ours, theirs, wrong_theirs, label):
        """Two-sample Kolmogorov-Smirnov against torchvision's draws (and wrong ones)."""
        self.assertGreater(stats.ks_2samp(ours, theirs).pvalue, ALPHA, label)
        self.assertLess(stats.ks_2samp(ours, wrong_theirs).pvalue, ALPHA, (label, "control"))

    def assert_bernoulli(self, flags, p, label):
        flags = [bool(f) for f in flags]
        self.assert_discrete(flags, {True: p, False: 1 - p},
                             {True: p + 0.05, False: 1 - p - 0.05} if p < 0.9 else
                             {True: p - 0.05, False: 1 - p + 0.05}, label)

    # --- per-op tests ---------------------------------------------------------------------------
    def test_probability_ops(self):
        # torchvision: `if torch.rand(1) < self.p`.
        for op, p in [("horizontal_flip", 0.5), ("vertical_flip(p=0.3)", 0.3),
                      ("random_grayscale", 0.1), ("invert(p=0.7)", 0.7),
                      ("solarize(threshold=100, p=0.2)", 0.2)]:
            u = [d[0] for d in draws(op)]
            self.assert_bernoulli([x < p for x in u], p, op)
            self.assert_continuous(u, stats.uniform(0, 1).cdf, stats.uniform(0, 0.97).cdf, op)

    def test_random_crop(self):
        # RandomCrop.get_params: torch.randint(0, h - th + 1), torch.randint(0, w - tw + 1).
        for op, (top_max, left_max) in [("random_crop(height=20, width=30)", (40, 50)),
                                        ("random_crop(height=60, width=75, padding=[2])",
                                         (4, 9))]:
            values = draws(op)
            self.assert_uniform_ints([d[0] for d in values], 0, top_max, (op, "top"))
            self.assert_uniform_ints([d[1] for d in values], 0, left_max, (op, "left"))

    def test_random_resized_crop_matches_get_params(self):
        ours = np.array(draws("random_resized_crop(height=8, width=8)"))
        image = torch.zeros(3, H, W)

        def theirs(scale):
            return np.array(torch_draws(lambda: T.RandomResizedCrop.get_params(
                image, scale, (3 / 4, 4 / 3))))
        right, wrong = theirs((0.08, 1.0)), theirs((0.25, 1.0))
        for k, name in enumerate(["top", "left", "height", "width"]):
            self.assert_same(ours[:, k], right[:, k], wrong[:, k], name)
        self.assert_same(ours[:, 2] * ours[:, 3], right[:, 2] * right[:, 3],
                         wrong[:, 2] * wrong[:, 3], "area")

    def test_color_jitter(self):
        # ColorJitter.get_params: fn_idx = torch.randperm(4); factors uniform in their ranges.
        values = np.array(draws("color_jitter(brightness=0.4, contrast=0.3, saturation=0.2, "
                                "hue=0.1)"))
        orders = [tuple(int(v) for v in row[:4]) for row in values]
        permutations = list(itertools.permutations(range(4)))
        self.assert_discrete(orders, {p: 1.0 for p in permutations},
                             {p: 1.3 if p[0] == 0 else 1.0 for p in permutations}, "order")
        for k, (low, high) in enumerate([(0.6, 1.4), (0.7, 1.3), (0.8, 1.2), (-0.1, 0.1)]):
            self.assert_continuous(values[:, 4 + k], stats.uniform(low, high - low).cdf,
                                   stats.uniform(low, 0.97 * (high - low)).cdf, k)

    def test_random_rotation(self):
        # RandomRotation.get_params: torch.empty(1).uniform_(degrees[0], degrees[1]).
        angles = [d[0] for d in draws("random_rotation(degrees_min=-30, degrees_max=45)")]
        self.assert_continuous(angles, stats.uniform(-30, 75).cdf, stats.uniform(-30, 73).cdf,
                               "angle")

    def test_random_affine_matches_get_params(self):
        ours = np.array(draws("random_affine(degrees_min=-10, degrees_max=10, "
                              "translate=[0.1, 0.2], scale_min=0.8, scale_max=1.2, "
                              "shear=[-5, 5, -3, 3])"))

        def theirs(translate):
            out = torch_draws(lambda: T.RandomAffine.get_params(
                [-10.0, 10.0], translate, [0.8, 1.2], [-5.0, 5.0, -3.0, 3.0], [W, H]))
            return np.array([[a, t[0], t[1], s, sh[0], sh[1]] for a, t, s, sh in out])
        right, wrong = theirs([0.1, 0.2]), theirs([0.12, 0.23])
        wrong[:, [0, 3, 4, 5]] *= 0.95
        for k, name in enumerate(["angle", "tx", "ty", "scale", "shear x", "shear y"]):
            self.assert_same(ours[:, k], right[:, k], wrong[:, k], name)

    def test_random_erasing_matches_get_params(self):
        ours = draws("random_erasing(p=0.7)", is_float=True)
        image = torch.zeros(3, H, W)

        def theirs(scale):
            out = []
            for _ in range(N):
                if torch.rand(1) < 0.7:
                    top, left, h, w, _ = T.RandomErasing.get_params(image, scale, (0.3, 3.3),
                                                                    [0.0])
                    out.append(None if (h, w) == (H, W) else (top, left, h, w))
                else:
                    out.append(None)
            return out
        torch.manual_seed(0)
        right, wrong = theirs((0.02, 0.33)), theirs((0.02, 0.25))
        self.assert_discrete([d[0] == 1 for d in ours],
                             {True: sum(r is not None for r in right) / N,
                              False: sum(r is None for r in right) / N},
                             {True: 0.65, False: 0.35}, "erased")
        ours_rects = np.array([d[1:] for d in ours if d[0] == 1])
        for k, name in enumerate(["top", "left", "height", "width"]):
            self.assert_same(ours_rects[:, k], [r[k] for r in right if r],
                             [r[k] * 1.1 for r in wrong if r], name)
        self.assert_same(ours_rects[:, 2] * ours_rects[:, 3], [r[2] * r[3] for r in right if r],
                         [r[2] * r[3] for r in wrong if r], "area")

    def test_random_perspective(self):
        # RandomPerspective: torch.rand(1) < p, then get_params' eight randint draws.
        values = draws("random_perspective(distortion_scale=0.5, p=0.6)")
        self.assert_bernoulli([d[0] == 1 for d in values], 0.6, "applied")
        points = np.array([d[1:] for d in values if d[0] == 1])
        dx, dy = int(0.5 * (W // 2)), int(0.5 * (H // 2))
        ranges = [(0, dx), (0, dy), (W - dx - 1, W - 1), (0, dy),
                  (W - dx - 1, W - 1), (H - dy - 1, H - 1), (0, dx), (H - dy - 1, H - 1)]
        for k, (low, high) in enumerate(ranges):
            self.assert_uniform_ints(points[:, k], low, high, ("end point", k))

    def test_combinators(self):
        applied = [len(d) > 0 for d in draws("random_apply(ops=[invert, vertical_flip], p=0.3)")]
        self.assert_bernoulli(applied, 0.3, "random_apply")
        ops = "invert, vertical_flip, grayscale(channels=3), equalize"
        chosen = [int(d[0]) for d in draws(f"random_choice(ops=[{ops}], p=[1, 2, 3, 4])")]
        self.assert_discrete(chosen, {0: 1, 1: 2, 2: 3, 3: 4}, {0: 1, 1: 2, 2: 3.5, 3: 3.5},
                             "random_choice weights")
        chosen = [int(d[0]) for d in draws(f"random_choice(ops=[{ops}])")]
        self.assert_uniform_ints(chosen, 0, 3, "random_choice")
        orders = [tuple(int(v) for v in d) for d in draws("random_order(ops=[invert, "
                                                          "vertical_flip, equalize])")]
        permutations = list(itertools.permutations(range(3)))
        self.assert_discrete(orders, {p: 1 for p in permutations},
                             {p: 1.25 if p[0] == 2 else 1 for p in permutations}, "random_order")

    def check_table_steps(self, steps, table_size, bins, label, fixed_bin=None):
        """Steps (index, bin, magnitude): operation uniform; bin uniform (or fixed); signed
        magnitudes negative with probability 1/2."""
        steps = np.array(steps).reshape(-1, 3)
        self.assert_uniform_ints(steps[:, 0], 0, table_size - 1, (label, "operation"))
        nonzero = steps[steps[:, 2] != 0]
        if fixed_bin is not None:
            self.assertTrue(np.all(nonzero[:, 1] == fixed_bin))
        elif bins:
            # Operations with magnitudes draw their bin uniformly (a zero magnitude is bin 0 of
            # a linspace from 0, or an operation without magnitudes: look at the others).
            with_bins = steps[np.isin(steps[:, 0], self.binned)]
            self.assert_uniform_ints(with_bins[:, 1], 0, bins - 1, (label, "bin"))
        signed = nonzero[np.isin(nonzero[:, 0], self.signed)]
        self.assert_bernoulli(signed[:, 2] < 0, 0.5, (label, "sign"))

    def test_rand_augment_and_trivial_augment_wide(self):
        # RandAugment / TrivialAugmentWide: op = torch.randint(14); TA's bin
        # torch.randint(num_bins); sign torch.randint(2) for signed operations.
        self.signed = list(range(1, 10))  # ShearX .. Sharpness
        self.binned = list(range(1, 12))  # ShearX .. Solarize
        self.check_table_steps([d for row in draws("rand_augment") for d in row], 14, 0,
                               "rand_augment", fixed_bin=9)
        self.check_table_steps([d for row in draws("trivial_augment_wide") for d in row], 14, 31,
                               "trivial_augment_wide")

    def test_auto_augment_get_params(self):
        # AutoAugment.get_params: torch.randint(25), torch.rand(2), torch.randint(2, (2,)).
        values = np.array(draws("auto_augment"))
        self.assert_uniform_ints(values[:, 0], 0, 24, "sub-policy")
        for k in (1, 2):
            self.assert_continuous(values[:, k], stats.uniform(0, 1).cdf,
                                   stats.uniform(0, 0.97).cdf, ("prob", k))
        for k in (3, 4):
            self.assert_bernoulli(values[:, k] == 1, 0.5, ("sign", k))

    def test_aug_mix(self):
        # AugMix: m ~ Dirichlet([alpha, alpha]) (m[1] ~ Beta(alpha, alpha)), chain weights ~
        # Dirichlet([alpha] * width) (each ~ Beta(alpha, (width - 1) alpha)), depth
        # torch.randint(1, 4), op torch.randint(13), bin torch.randint(severity), sign 1/2.
        self.signed = [0, 1, 2, 3, 4, 9, 10, 11, 12]
        self.binned = [0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12]
        for alpha in (1.0, 0.5):
            rows = draws(f"aug_mix(alpha={alpha}, severity=4)")
            m1 = [r[1] for r in rows]
            self.assert_continuous(m1, stats.beta(alpha, alpha).cdf,
                                   stats.beta(alpha, 1.15 * alpha).cdf, ("m1", alpha))
            self.assertLess(max(abs(r[0] + r[1] - 1) for r in rows), 1e-6)
            first = [r[2] for r in rows]
            self.assert_continuous(first, stats.beta(alpha, 2 * alpha).cdf,
                                   stats.beta(alpha, 2.3 * alpha).cdf, ("chain weight", alpha))
            depths, steps = [], []
            for r in rows:
                rest = r[5:]
                while rest:
                    depth = int(rest[0])
                    depths.append(depth)
                    steps.extend(rest[1:1 + 3 * depth])
                    rest = rest[1 + 3 * depth:]
            self.assert_uniform_ints(depths, 1, 3, "depth")
            self.check_table_steps(steps, 13, 4, ("aug_mix", alpha))


if __name__ == "__main__":
    unittest.main(verbosity=2)
