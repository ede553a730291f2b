"""Image-text and segmentation jobs through the Python module: a generated WebDataset shard set
(.jpg, .txt, .json, .cls, .seg.png; captions with multi-byte UTF-8, palette label maps) read by
stoker.Loader(fields=[...]) from a local cluster of real processes (stoker.LocalCluster).

    /usr/bin/python3 tests/python/fields_loader_test.py BUILD_DIR

Checks: one epoch yields a dict per batch whose "image" is the images tensor, "label" the labels,
"text" and "json" lists of str equal to what was packed, byte for byte, every sample exactly
once; other keys arrive as bytes, in the order the fields were named; a caption that is not
UTF-8 raises UnicodeDecodeError naming the field and the sample; a worker killed (SIGKILL)
mid-epoch loses and duplicates nothing; typed targets asked of tars, and a repeated field, are
stoker.InvalidArgumentError naming fields[i]; "semantic_mask" arrives as a uint8 [H, W] tensor per
sample, every sample once, equal to its .seg.png's palette indices moved as torchvision moves a
mask (nearest resize, then 255 where pad filled), listed or stacked (targets="padded"); a .seg.png
of another size than its image is skipped (replaced), counted as bad_annotation, and the job goes
on. Bounded: an alarm fails the run after 170 s.
"""

import io
import os
import signal
import sys
import tarfile
import tempfile
import time
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

import stoker  # noqa: E402

SHARDS = 3
PER_SHARD = 16
SAMPLES = SHARDS * PER_SHARD
BATCH = 4


def caption(i):
    # 2-, 3- and 4-byte UTF-8, and a length that varies with the sample.
    return f"photo n\u00b0{i} \u2014 caf\u00e9 \U0001F408 " + "+" * (i % 5)


def json_text(i):
    return f'{{"id": {i}, "url": "https://example.com/{i}.jpg"}}'


def label(i):
    return i % 3


def blob(i):
    return bytes([i, 0, 255, 0x80])  # Not UTF-8: arrives as bytes.


def jpeg(i):
    rng = np.random.default_rng(i)
    pixels = rng.integers(0, 256, size=(24, 32, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=90)
    return out.getvalue()


SEG_HEIGHT, SEG_WIDTH = 24, 32  # the .jpg's size
# Resized to 16x16, then padded by 1 left and right, 2 top and bottom: 20x18.
SEG_PIPELINE = "decode, resize(height=16, width=16), pad(padding=[1, 2]), to_float"


def label_map(i):
    """Sample i's labels: a rectangle of class 1 + i % 7 and a band of class 200 on 0."""
    labels = np.zeros((SEG_HEIGHT, SEG_WIDTH), dtype=np.uint8)
    labels[4:12, 6:20] = 1 + i % 7
    labels[14:, i % 9:i % 9 + 10] = 200
    return labels


def seg_png(labels):
    """`labels` as a palette PNG (mode "P"): the indices are the labels, the colours are not."""
    image = Image.fromarray(labels, mode="P")
    image.putpalette([(37 * c) % 256 for c in range(3 * 256)])
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def moved_label_map(i):
    """label_map(i) through SEG_PIPELINE as torchvision moves a mask: torch's nearest resize
    (source index floor(dst * in / out)), then the pad's fill, 255 for a semantic mask."""
    rows = np.floor(np.arange(16) * np.float32(SEG_HEIGHT / 16)).astype(int)
    cols = np.floor(np.arange(16) * np.float32(SEG_WIDTH / 16)).astype(int)
    resized = label_map(i)[rows][:, cols]
    return np.pad(resized, ((2, 2), (1, 1)), constant_values=255)


def add_file(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def write_tars(directory):
    """SHARDS tars of PER_SHARD samples keyed "s<i>"; returns their paths."""
    paths = []
    for s in range(SHARDS):
        path = os.path.join(directory, f"train-{s}.tar")
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(s * PER_SHARD, (s + 1) * PER_SHARD):
                for ext, data in (("jpg", jpeg(i)), ("txt", caption(i).encode("utf-8")),
                                  ("json", json_text(i).encode("utf-8")),
                                  ("cls", str(label(i)).encode()), ("meta.bin", blob(i)),
                                  ("seg.png", seg_png(label_map(i)))):
                    add_file(tar, f"s{i:03d}.{ext}", data)
        paths.append(path)
    return paths


def unique_seed():
    return int(time.time() * 1000) % (1 << 40) + os.getpid()


class ImageTextCluster(unittest.TestCase):
    """The shard set and a cluster of 2 workers, per test class; no tests of its own."""
    cluster = None

    @classmethod
    def setUpClass(cls):
        cls.data = tempfile.TemporaryDirectory(prefix="stoker-fields-")
        cls.paths = write_tars(cls.data.name)
        cls.cluster = stoker.LocalCluster(BUILD_DIR, workers=2, tls_dir=None).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        cls.data.cleanup()

    def loader(self, **kwargs):
        args = dict(coordinator=self.cluster.address, dataset=self.paths,
                    pipeline="decode, resize(height=16, width=16), to_float", batch_size=BATCH,
                    epochs=1, seed=unique_seed(), fields=["image", "label", "text", "json"],
                    tls=stoker.TlsOptions(insecure=True), drop_last=True)
        args.update(kwargs)
        return stoker.Loader(**args)

    def check_batch(self, batch, seen):
        self.assertEqual(set(batch), {"image", "label", "text", "json", "sample_indices"})
        self.assertEqual(tuple(batch["image"].shape), (BATCH, 3, 16, 16))
        for k, index in enumerate(batch["sample_indices"].tolist()):
            self.assertEqual(batch["label"][k].item(), label(index))
            self.assertIsInstance(batch["text"][k], str)
            self.assertEqual(batch["text"][k], caption(index))
            self.assertEqual(batch["json"][k], json_text(index))
            seen[index] = seen.get(index, 0) + 1


class FieldsLoaderTest(ImageTextCluster):
    def test_one_epoch_every_sample_once_with_caption_and_json(self):
        seen = {}
        with self.loader(return_indices=True) as loader:
            for batch in loader:
                self.check_batch(batch, seen)
        self.assertEqual(seen, {i: 1 for i in range(SAMPLES)})

    def test_fields_keep_the_asked_order_and_other_keys_are_bytes(self):
        with self.loader(fields=["meta.bin", "image", "json"], return_indices=True) as loader:
            batch = next(iter(loader))
            self.assertEqual(list(batch), ["meta.bin", "image", "json", "sample_indices"])
            for k, index in enumerate(batch["sample_indices"].tolist()):
                self.assertEqual(batch["meta.bin"][k], blob(index))
                self.assertEqual(batch["json"][k], json_text(index))
            stoker_batch = next(loader.batches())
            self.assertEqual(stoker_batch.raw.field_names, ["meta.bin", "json"])
            with self.assertRaisesRegex(KeyError, "text"):
                stoker_batch.field("text")

    def test_a_caption_that_is_not_utf8_raises_naming_field_and_sample(self):
        path = os.path.join(self.data.name, "not-utf8.tar")
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(BATCH):
                add_file(tar, f"u{i}.jpg", jpeg(i))
                add_file(tar, f"u{i}.txt", b"\xff\xfe latin-1?" if i == 2 else b"fine")
        with self.loader(dataset=[path], fields=["image", "text"], shuffle="none") as loader:
            with self.assertRaisesRegex(UnicodeDecodeError, "field 'text' of sample 2"):
                next(iter(loader))

    def test_typed_and_repeated_fields_name_their_position(self):
        with self.assertRaisesRegex(stoker.InvalidArgumentError,
                                    r"fields\[1\]: \"boxes\": the dataset has WebDataset shards; "
                                    r"typed targets come from stoker shards"):
            len(self.loader(fields=["image", "boxes"]))
        with self.assertRaisesRegex(stoker.InvalidArgumentError, r"fields\[2\]: \"text\" is named twice"):
            len(self.loader(fields=["image", "text", "text"]))
        with self.assertRaises(TypeError):
            self.loader(fields="text")


class SemanticMaskTest(ImageTextCluster):
    """A segmentation job: .jpg + .seg.png, the label map moved with the image."""

    def seg_loader(self, **kwargs):
        return self.loader(pipeline=SEG_PIPELINE, fields=["image", "semantic_mask"],
                           return_indices=True, **kwargs)

    def test_one_epoch_every_sample_once_with_its_moved_mask(self):
        seen = {}
        with self.seg_loader() as loader:
            for batch in loader:
                self.assertEqual(tuple(batch["image"].shape), (BATCH, 3, 20, 18))
                for k, index in enumerate(batch["sample_indices"].tolist()):
                    mask = batch["semantic_mask"][k]
                    self.assertEqual(mask.dtype, torch.uint8)
                    self.assertEqual(tuple(mask.shape), (20, 18))
                    np.testing.assert_array_equal(mask.numpy(), moved_label_map(index))
                    seen[index] = seen.get(index, 0) + 1
        self.assertEqual(seen, {i: 1 for i in range(SAMPLES)})

    def test_padded_targets_stack_the_masks(self):
        with self.seg_loader(targets="padded") as loader:
            batch = next(iter(loader))
        self.assertEqual(tuple(batch["semantic_mask"].shape), (BATCH, 20, 18))
        self.assertEqual(batch["semantic_mask_count"].tolist(), [1] * BATCH)
        for k, index in enumerate(batch["sample_indices"].tolist()):
            np.testing.assert_array_equal(batch["semantic_mask"][k].numpy(),
                                          moved_label_map(index))

    def test_a_mask_of_another_size_is_skipped_counted_and_the_job_goes_on(self):
        path = os.path.join(self.data.name, "bad-seg.tar")
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(BATCH):
                add_file(tar, f"b{i}.jpg", jpeg(i))
                labels = label_map(i)[:10] if i == 2 else label_map(i)
                add_file(tar, f"b{i}.seg.png", seg_png(labels))
        with self.seg_loader(dataset=[path], shuffle="none",
                             max_bad_sample_fraction=0.25) as loader:
            indices = [i for batch in loader for i in batch["sample_indices"].tolist()]
        self.assertEqual(sorted(indices), [0, 1, 3, 3])  # 2 replaced by the next one
        with self.assertRaisesRegex(stoker.DataLossError, "bad_annotation=1"):
            with self.seg_loader(dataset=[path], shuffle="none",
                                 max_bad_sample_fraction=0.0) as loader:
                for _ in loader:
                    pass
        logs = "".join(self.cluster.log_tail(f"worker{w}", 20000) for w in range(2))
        self.assertIn("\"semantic_mask\": is 32x10, expected 32x24", logs)


class WorkerKilledTest(ImageTextCluster):
    """A worker dies mid-epoch (SIGKILL): its leased batches go to the other worker."""

    def test_a_worker_killed_mid_epoch_loses_and_duplicates_nothing(self):
        seen = {}
        with self.loader(return_indices=True, prefetch_bytes=2 * BATCH * 3 * 16 * 16 * 4) as loader:
            for n, batch in enumerate(loader):
                self.check_batch(batch, seen)
                if n == 2:
                    self.cluster.kill_worker(0)
        self.assertEqual(seen, {i: 1 for i in range(SAMPLES)})


def main():
    def on_alarm(signum, frame):
        raise TimeoutError("fields_loader_test: over 170 s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(170)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
