"""Image-text jobs through the Python module: a generated WebDataset shard set (.jpg, .txt, .json,
.cls; captions with multi-byte UTF-8) read by stoker.Loader(fields=[...]) from a local cluster of
real processes (stoker.LocalCluster).

    /usr/bin/python3 tests/python/fields_loader_test.py BUILD_DIR

Checks: one epoch yields a dict per batch whose "image" is the images tensor, "label" the labels,
"text" and "json" lists of str equal to what was packed, byte for byte, every sample exactly
once; other keys arrive as bytes, in the order the fields were named; a caption that is not
UTF-8 raises UnicodeDecodeError naming the field and the sample; a worker killed (SIGKILL)
mid-epoch loses and duplicates nothing; typed targets asked of tars, and a repeated field, are
stoker.InvalidArgumentError naming fields[i]. Bounded: an alarm fails the run after 170 s.
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
                                  ("cls", str(label(i)).encode()), ("meta.bin", blob(i))):
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
