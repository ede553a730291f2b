"""MixUp / CutMix through the Python module against torchvision v2's formulation, on a local
cluster of real processes (stoker.LocalCluster).

    /usr/bin/python3 tests/python/batch_mix_test.py BUILD_DIR

The same job is run with and without the batch-level op (same seed: the per-sample outputs are
identical, since the batch stage draws from its own RNG). From each mixed batch's soft labels we
read lambda, apply torchvision v2's formula to the unmixed batch
(MixUp: x.roll(1, 0).mul_(1 - lam).add_(x.mul(lam)); CutMix: rolled[..., y1:y2, x1:x2] pasted,
lam = 1 - box area / image area) and compare. Also: soft labels are float32 [N, num_classes]
tensors over the batch's memory, rows sum to 1; the Loader's mixup=/cutmix= arguments accept a
dict or an object with .alpha/.num_classes and refuse bad ones. Bounded: an alarm fails the run
after 150 s.
"""

import os
import signal
import sys
import time
import types
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import torch  # noqa: E402

import stoker  # noqa: E402

BATCH, H, W, C, K = 8, 12, 10, 3, 6
DATASET = {"num_samples": 96, "height": H, "width": W, "channels": C, "num_classes": K}


def lam_of(soft, labels):
    """lambda of a mixed batch: the weight of a sample's own label where it differs from the
    previous sample's."""
    for i in range(len(labels)):
        if labels[i] != labels[i - 1]:
            return float(soft[i, labels[i]])
    raise AssertionError("every label equal: lambda not observable")


class BatchMixTest(unittest.TestCase):
    cluster = None

    @classmethod
    def setUpClass(cls):
        cls.cluster = stoker.LocalCluster(BUILD_DIR, workers=2).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.__exit__(None, None, None)

    def batches(self, seed, **kwargs):
        loader = stoker.Loader(coordinator=self.cluster.address, dataset=DATASET,
                               pipeline="to_float, horizontal_flip", batch_size=BATCH,
                               seed=seed, ordered=True, drop_last=True,
                               **self.cluster.loader_tls, **kwargs)
        with loader:
            return [(b.images.clone(), b.labels, b.hard_labels.clone()) for b in loader.batches()]

    def test_mixup_and_cutmix_equal_torchvision_formula(self):
        seed = int(time.time() * 1000) % (1 << 40) + os.getpid()
        plain = self.batches(seed)
        mixup = self.batches(seed, mixup={"alpha": 0.4, "num_classes": K})
        cutmix = self.batches(seed, cutmix=types.SimpleNamespace(alpha=1.0, num_classes=K))
        self.assertEqual(len(plain), 96 // BATCH)
        boxes = 0
        for (x, hard, _), (mixed, soft, hard2), (cut, soft_c, _) in zip(plain, mixup, cutmix):
            self.assertTrue(torch.equal(hard, hard2))
            self.assertEqual(soft.dtype, torch.float32)
            self.assertEqual(tuple(soft.shape), (BATCH, K))
            self.assertTrue(torch.allclose(soft.sum(1), torch.ones(BATCH), atol=1e-6))
            lam = lam_of(soft, hard)
            expected = x.roll(1, 0).mul_(1.0 - lam).add_(x.mul(lam))
            self.assertLessEqual((mixed - expected).abs().max().item(), 1e-6)
            one_hot = torch.nn.functional.one_hot(hard, K).float()
            labels = one_hot.roll(1, 0).mul_(1.0 - lam).add_(one_hot.mul(lam))
            self.assertLessEqual((soft - labels).abs().max().item(), 1e-6)

            lam_c = lam_of(soft_c, hard)
            changed = (cut != x).any(dim=1).any(dim=0)  # [H, W]: pixels some sample changed
            rolled = x.roll(1, 0)
            expected = x.clone()
            if changed.any():
                ys, xs = torch.nonzero(changed, as_tuple=True)
                y1, y2, x1, x2 = ys.min().item(), ys.max().item() + 1, xs.min().item(), xs.max().item() + 1
                self.assertAlmostEqual(lam_c, 1.0 - (x2 - x1) * (y2 - y1) / (H * W), places=6)
                expected[..., y1:y2, x1:x2] = rolled[..., y1:y2, x1:x2]
                boxes += 1
            else:
                self.assertAlmostEqual(lam_c, 1.0, places=6)
            self.assertTrue(torch.equal(cut, expected))
        self.assertGreater(boxes, 0)

    def test_soft_labels_share_the_batch_memory(self):
        loader = stoker.Loader(coordinator=self.cluster.address, dataset=DATASET,
                               pipeline="to_float, mixup(alpha=0.2, num_classes=6)",
                               batch_size=BATCH, seed=1234, job_name=f"mix-{os.getpid()}",
                               **self.cluster.loader_tls)
        with loader:
            batch = next(iter(loader.batches()))
            soft = batch.labels
            self.assertEqual(batch.raw.num_classes, K)
            again = torch.utils.dlpack.from_dlpack(batch.raw.soft_labels_dlpack())
            self.assertEqual(soft.data_ptr(), again.data_ptr())  # a view, not a copy

    def test_explain_pipeline_shares_stoker_ctl_table(self):
        text = stoker.explain_pipeline("to_float, mixup(alpha=0.2, num_classes=6)",
                                       input="12x10x3", layout="chw", runs=0)
        self.assertIn("  0  to_float               12x10x3 float32", text)
        self.assertIn("batch_mix: mixup(alpha=0.2) per batch", text)
        self.assertIn("output per sample: 3x12x10 float32 CHW, 1440 bytes", text)
        with self.assertRaisesRegex(stoker.InvalidArgumentError, "input: expected HxWxC"):
            stoker.explain_pipeline("to_float", input="12x10")

    def test_bad_arguments(self):
        common = dict(coordinator=self.cluster.address, dataset=DATASET, **self.cluster.loader_tls)
        with self.assertRaisesRegex(ValueError, "mixup: num_classes is required"):
            stoker.Loader(mixup={"alpha": 0.2}, **common)
        with self.assertRaisesRegex(ValueError, "cutmix: unknown keys \\['beta'\\]"):
            stoker.Loader(cutmix={"beta": 0.2, "num_classes": 3}, **common)
        with self.assertRaisesRegex(TypeError, "torchvision.transforms.v2.MixUp"):
            stoker.Loader(mixup=0.2, **common)
        # Values are checked where the pipeline is compiled: opening the job.
        with self.assertRaisesRegex(Exception, "batch_mix.mixup_alpha: must be >= 0"):
            with stoker.Loader(mixup={"alpha": -1, "num_classes": 3}, **common) as loader:
                loader.next_batch()


if __name__ == "__main__":
    signal.signal(signal.SIGALRM, lambda *_: os._exit(124))
    signal.alarm(150)
    unittest.main()
