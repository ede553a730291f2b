"""Detection jobs through the Python module: a generated set of stoker shards whose records carry
typed targets (boxes, box labels, instance masks; written here byte for byte as
docs/shard_format.md and augment/targets/target_codec.h describe them) read by
stoker.Loader(fields=["image", "boxes", "box_labels", "masks"]) from a local cluster of real
processes (stoker.LocalCluster).

    /usr/bin/python3 tests/python/targets_loader_test.py BUILD_DIR

The pipeline flips every image (p=1) and doubles its size, so each sample's moved boxes and masks
are known exactly: x -> 2 (W - x), y -> 2 y. Checks: one epoch yields every sample exactly once
with its boxes, labels and masks as expected (lists of tensors; padded tensors with counts;
NumPy arrays; stoker.detection_targets; keypoints and padding without a cluster); a worker killed (SIGKILL) mid-epoch loses and
duplicates nothing; a sample whose box lies outside its image is skipped (replaced by the next
one), counted as bad_annotation, and the job goes on; a COCO set generated and packed as a user
would (stoker-gen-images --coco-images, stoker-pack --coco) yields every sample once with the
instances file's boxes moved and its category ids, also when a worker is killed. Bounded: an
alarm fails the run after 170 s.
"""

import io
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

import stoker  # noqa: E402

SHARDS = 3
PER_SHARD = 12
SAMPLES = SHARDS * PER_SHARD
BATCH = 4
HEIGHT, WIDTH = 24, 32  # stored images
PIPELINE = f"decode, horizontal_flip(p=1), resize(height={2 * HEIGHT}, width={2 * WIDTH})"


# --- the shard format, written independently of the C++ writer ---
def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def record_fields(fields):
    """A record's metadata: name_len u16 | name | value_len u32 | value, per field."""
    return b"".join(struct.pack("<H", len(name)) + name.encode() + struct.pack("<I", len(value))
                    + value for name, value in fields)


def write_shard(path, records):
    """records: (key, label, image bytes, metadata) tuples."""
    out = bytearray(b"STOKSHRD" + struct.pack("<II", 1, 0))
    index = []
    for key, label, data, metadata in records:
        key = key.encode()
        body = struct.pack("<HIq", len(key), len(metadata), label) + key + metadata + data
        index.append((len(out), 12 + len(body)))
        out += struct.pack("<III", 0x43455253, len(body), crc32c(body)) + body
    index_offset = len(out)
    index_bytes = struct.pack("<I", 0x58444953) + b"".join(
        struct.pack("<QI", offset, length) for offset, length in index)
    out += index_bytes
    out += struct.pack("<QQII", index_offset, len(index), crc32c(index_bytes), 1) + b"STOKSEND"
    with open(path, "wb") as f:
        f.write(out)


# --- the scenes: integer boxes, their labels and rectangle masks ---
def scene_boxes(i):
    """Sample i's 1 to 3 boxes, XYXY integer pixels of its 24x32 image."""
    return [(1 + (i + 3 * b) % 20, 1 + (i + b) % 12, 9 + (i + 3 * b) % 20 + b, 10 + (i + b) % 12)
            for b in range(1 + i % 3)]


def scene_labels(i):
    return [10 * i + b for b in range(len(scene_boxes(i)))]


def rect_masks(boxes, height, width):
    masks = np.zeros((len(boxes), height, width), dtype=np.uint8)
    for m, (x1, y1, x2, y2) in enumerate(boxes):
        masks[m, int(y1):int(y2), int(x1):int(x2)] = 1
    return masks


def mask_runs(mask):
    """Row-major run lengths alternating 0s and 1s, starting with 0s."""
    flat = mask.reshape(-1)
    runs, value, run = [], 0, 0
    for pixel in flat:
        if pixel != value:
            runs.append(run)
            value, run = pixel, 0
        run += 1
    runs.append(run)
    return runs


def stored_targets(boxes, labels):
    masks = rect_masks(boxes, HEIGHT, WIDTH)
    stored_masks = struct.pack("<III", len(masks), HEIGHT, WIDTH)
    for mask in masks:
        runs = mask_runs(mask)
        stored_masks += struct.pack(f"<I{len(runs)}I", len(runs), *runs)
    return [("boxes", np.asarray(boxes, dtype="<f4").tobytes()),
            ("box_labels", np.asarray(labels, dtype="<i8").tobytes()),
            ("masks", stored_masks)]


def png(i):
    pixels = np.random.default_rng(i).integers(0, 256, size=(HEIGHT, WIDTH, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def write_scenes(directory, name, samples, per_shard, bad=()):
    """Shards of `samples` scenes; the indices in `bad` hold a box past the image's right edge."""
    paths = []
    for s in range(0, samples, per_shard):
        records = []
        for i in range(s, min(s + per_shard, samples)):
            boxes = [(20, 2, WIDTH + 5, 9)] if i in bad else scene_boxes(i)
            fields = stored_targets(boxes, scene_labels(i)[:len(boxes)])
            records.append((f"scene/{i:04d}", 0, png(i), record_fields(fields)))
        path = os.path.join(directory, f"{name}-{s // per_shard}.stoker")
        write_shard(path, records)
        paths.append(path)
    return paths


# --- what the pipeline makes of them ---
def moved_boxes(i):
    return np.array([(2 * (WIDTH - x2), 2 * y1, 2 * (WIDTH - x1), 2 * y2)
                     for x1, y1, x2, y2 in scene_boxes(i)], dtype=np.float32)


def moved_masks(i):
    return rect_masks(moved_boxes(i), 2 * HEIGHT, 2 * WIDTH)


def unique_seed():
    return int(time.time() * 1000) % (1 << 40) + os.getpid()


class SceneCluster(unittest.TestCase):
    """The shard sets and a cluster of 2 workers, per test class; no tests of its own."""
    cluster = None

    @classmethod
    def setUpClass(cls):
        cls.data = tempfile.TemporaryDirectory(prefix="stoker-targets-")
        cls.paths = write_scenes(cls.data.name, "scenes", SAMPLES, PER_SHARD)
        cls.bad_paths = write_scenes(cls.data.name, "bad", 8, 8, bad={5})
        cls.cluster = stoker.LocalCluster(BUILD_DIR, workers=2, tls_dir=None).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        cls.data.cleanup()

    def loader(self, **kwargs):
        args = dict(coordinator=self.cluster.address, dataset=self.paths, pipeline=PIPELINE,
                    batch_size=BATCH, epochs=1, seed=unique_seed(),
                    fields=["image", "boxes", "box_labels", "masks"], return_indices=True,
                    tls=stoker.TlsOptions(insecure=True), drop_last=True)
        args.update(kwargs)
        return stoker.Loader(**args)

    def check_sample(self, index, boxes, labels, masks):
        np.testing.assert_array_equal(np.asarray(boxes), moved_boxes(index), f"sample {index}")
        np.testing.assert_array_equal(np.asarray(labels), scene_labels(index), f"sample {index}")
        np.testing.assert_array_equal(np.asarray(masks), moved_masks(index), f"sample {index}")

    def check_batch(self, batch, seen):
        self.assertEqual(set(batch), {"image", "boxes", "box_labels", "masks", "sample_indices"})
        for k, index in enumerate(batch["sample_indices"].tolist()):
            self.assertEqual(str(batch["boxes"][k].dtype), "torch.float32")
            self.assertEqual(str(batch["box_labels"][k].dtype), "torch.int64")
            self.assertEqual(str(batch["masks"][k].dtype), "torch.uint8")
            self.check_sample(index, batch["boxes"][k], batch["box_labels"][k],
                              batch["masks"][k])
            seen[index] = seen.get(index, 0) + 1


class TargetsLoaderTest(SceneCluster):
    def test_one_epoch_every_sample_once_with_its_moved_targets(self):
        seen = {}
        with self.loader() as loader:
            for batch in loader:
                self.check_batch(batch, seen)
        self.assertEqual(seen, {i: 1 for i in range(SAMPLES)})

    def test_padded_targets_carry_their_counts(self):
        with self.loader(targets="padded", tensors="numpy", shuffle="none") as loader:
            batch = next(iter(loader))
        self.assertEqual(batch["boxes"].dtype, np.float32)
        counts = batch["boxes_count"]
        self.assertEqual(batch["boxes"].shape, (BATCH, max(counts), 4))
        self.assertEqual(batch["masks"].shape, (BATCH, max(counts), 2 * HEIGHT, 2 * WIDTH))
        for k, index in enumerate(batch["sample_indices"].tolist()):
            n = int(counts[k])
            self.assertEqual(n, len(scene_boxes(index)))
            self.assertEqual(int(batch["masks_count"][k]), n)
            self.check_sample(index, batch["boxes"][k][:n], batch["box_labels"][k][:n],
                              batch["masks"][k][:n])
            self.assertFalse(batch["boxes"][k][n:].any())

    def test_detection_targets_match_torchvision_references(self):
        with self.loader(pipeline=PIPELINE + ", to_float", layout="chw") as loader:
            batch = next(iter(loader))
        images, targets = stoker.detection_targets(batch)
        self.assertEqual(tuple(images.shape), (BATCH, 3, 2 * HEIGHT, 2 * WIDTH))
        self.assertEqual(len(targets), BATCH)
        for k, index in enumerate(batch["sample_indices"].tolist()):
            self.assertEqual(set(targets[k]), {"boxes", "labels", "masks"})
            self.check_sample(index, targets[k]["boxes"], targets[k]["labels"],
                              targets[k]["masks"])

    def test_a_bad_annotation_is_skipped_counted_and_the_job_goes_on(self):
        # 1 of 8 samples is over the default 1% limit: this job allows it.
        with self.loader(dataset=self.bad_paths, shuffle="none",
                         max_bad_sample_fraction=0.25) as loader:
            indices = [i for batch in loader for i in batch["sample_indices"].tolist()]
        self.assertEqual(sorted(indices), [0, 1, 2, 3, 4, 6, 6, 7])  # 5 replaced by the next one
        with self.assertRaisesRegex(stoker.DataLossError, "bad_annotation=1"):
            with self.loader(dataset=self.bad_paths, shuffle="none",
                             max_bad_sample_fraction=0.0) as loader:
                for _ in loader:
                    pass
        logs = "".join(self.cluster.log_tail(f"worker{w}", 20000) for w in range(2))
        self.assertIn("bad_annotation", logs)
        self.assertIn("lies outside the 32x24 image", logs)


# --- a COCO set as a user packs it: stoker-gen-images --coco-images, stoker-pack --coco ---
COCO_IMAGES = 20


def pack_coco_set(directory):
    """Generates and packs a COCO set under `directory`; returns (manifest path, the instances
    file's boxes (XYXY), category ids and keypoints ([x, y, v] per keypoint) per sample, in the
    packed order: by image id)."""
    tools = os.path.join(BUILD_DIR, "tools")
    scenes, shards = os.path.join(directory, "scenes"), os.path.join(directory, "coco")
    subprocess.run([f"{tools}/stoker-gen-images", f"--output={scenes}",
                    f"--coco-images={COCO_IMAGES}", f"--width={WIDTH}",
                    f"--height={HEIGHT}"], check=True, capture_output=True)
    subprocess.run([f"{tools}/stoker-pack", f"--coco={scenes}/instances.json",
                    f"--input={scenes}", f"--output={shards}", f"--data-root={directory}"],
                   check=True, capture_output=True)
    with open(os.path.join(scenes, "instances.json")) as f:
        coco = json.load(f)
    ids = sorted(image["id"] for image in coco["images"])
    boxes, labels = {i: [] for i in ids}, {i: [] for i in ids}
    keypoints = {i: [] for i in ids}
    for a in coco["annotations"]:
        x, y, w, h = a["bbox"]
        boxes[a["image_id"]].append((x, y, x + w, y + h))
        labels[a["image_id"]].append(a["category_id"])
        keypoints[a["image_id"]].append(np.reshape(a["keypoints"], (-1, 3)))
    return (os.path.join(shards, "manifest.json"),
            [(boxes[i], labels[i], keypoints[i]) for i in ids])


class CocoPackedTest(unittest.TestCase):
    """A COCO set packed by stoker-pack --coco, flipped and doubled: every sample once with the
    instances file's boxes and keypoints moved, its category ids and one mask per box inside its
    box, also when a worker is killed mid-epoch."""

    @classmethod
    def setUpClass(cls):
        cls.data = tempfile.TemporaryDirectory(prefix="stoker-coco-")
        cls.manifest, cls.expected = pack_coco_set(cls.data.name)
        cls.cluster = stoker.LocalCluster(BUILD_DIR, workers=2, tls_dir=None).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        cls.data.cleanup()

    def check_sample(self, index, boxes, labels, masks, keypoints):
        stored, categories, points = self.expected[index]
        # v2's keypoint kernels: a flip mirrors about the last pixel (W - 1 - x), resize scales;
        # the visibility is kept.
        moved_points = np.array([(2 * (WIDTH - 1 - x), 2 * y, v) for p in points for x, y, v in p],
                                dtype=np.float32).reshape(-1, 3)
        keypoints = np.asarray(keypoints)
        self.assertEqual(keypoints.shape[0], len(stored), f"sample {index}")
        np.testing.assert_allclose(keypoints.reshape(-1, 3), moved_points, atol=1e-4,
                                   err_msg=f"sample {index}")
        moved = np.array([(2 * (WIDTH - x2), 2 * y1, 2 * (WIDTH - x1), 2 * y2)
                          for x1, y1, x2, y2 in stored], dtype=np.float32).reshape(-1, 4)
        np.testing.assert_allclose(np.asarray(boxes), moved, atol=1e-4,
                                   err_msg=f"sample {index}")
        self.assertEqual(np.asarray(labels).tolist(), categories, f"sample {index}")
        masks = np.asarray(masks)
        self.assertEqual(masks.shape, (len(stored), 2 * HEIGHT, 2 * WIDTH))
        for m, (x1, y1, x2, y2) in enumerate(moved):
            ys, xs = np.nonzero(masks[m])
            if len(xs) == 0:  # A thin shape on so small an image may cover no pixel centre.
                continue
            self.filled_masks += 1
            # Polygon fills and RLE rounding stay inside the (moved) box.
            self.assertGreaterEqual(xs.min(), np.floor(x1), f"sample {index} mask {m}")
            self.assertLess(xs.max(), np.ceil(x2), f"sample {index} mask {m}")
            self.assertGreaterEqual(ys.min(), np.floor(y1), f"sample {index} mask {m}")
            self.assertLess(ys.max(), np.ceil(y2), f"sample {index} mask {m}")

    def test_every_sample_once_with_its_annotations_also_when_a_worker_dies(self):
        seen = {}
        self.filled_masks = 0
        with stoker.Loader(coordinator=self.cluster.address, dataset=self.manifest,
                           pipeline=PIPELINE,
                           batch_size=BATCH, epochs=1, seed=unique_seed(), drop_last=True,
                           fields=["image", "boxes", "box_labels", "masks", "keypoints"],
                           return_indices=True, tls=stoker.TlsOptions(insecure=True),
                           prefetch_bytes=2 * BATCH * 3 * 4 * HEIGHT * WIDTH) as loader:
            for n, batch in enumerate(loader):
                for k, index in enumerate(batch["sample_indices"].tolist()):
                    self.check_sample(index, batch["boxes"][k], batch["box_labels"][k],
                                      batch["masks"][k], batch["keypoints"][k])
                    seen[index] = seen.get(index, 0) + 1
                if n == 1:
                    self.cluster.kill_worker(0)
        self.assertEqual(seen, {i: 1 for i in range(COCO_IMAGES)})
        self.assertTrue(any(not boxes for boxes, _, _ in self.expected))  # images without boxes
        self.assertGreater(self.filled_masks, COCO_IMAGES)


class FakeRawBatch:
    """The part of stoker._stoker.Batch that typed targets read: keypoints, and a sample with
    none, without a cluster."""
    shape = [2, 2, 3, 3]  # [N, H, W, C]
    layout = "hwc"
    field_names = ["keypoints"]

    @staticmethod
    def field_values(column):
        two = struct.pack("<I", 2) + np.arange(6, dtype="<f4").tobytes()  # 1 instance, K=2
        return [two, struct.pack("<I", 2)]  # the second sample: K=2, no instance


class TargetArraysTest(unittest.TestCase):
    def test_keypoints_and_padding(self):
        arrays = stoker.targets.target_arrays(FakeRawBatch, "keypoints")
        self.assertEqual(arrays[0].shape, (1, 2, 3))
        np.testing.assert_array_equal(arrays[0].reshape(-1), np.arange(6))
        self.assertEqual(arrays[1].shape, (0, 2, 3))
        padded, counts = stoker.targets.pad_targets("keypoints", arrays)
        self.assertEqual(padded.shape, (2, 1, 2, 3))
        np.testing.assert_array_equal(counts, [1, 0])
        self.assertFalse(padded[1].any())

    def test_detection_targets_slices_padded_fields_by_their_counts(self):
        batch = {"image": np.zeros((2, 3, 4, 4)), "boxes": np.ones((2, 3, 4), np.float32),
                 "boxes_count": np.array([3, 1]), "box_labels": np.ones((2, 3), np.int64),
                 "box_labels_count": np.array([3, 1])}
        images, targets = stoker.detection_targets(batch)
        self.assertIs(images, batch["image"])
        self.assertEqual([set(t) for t in targets], [{"boxes", "labels"}] * 2)
        self.assertEqual([len(t["boxes"]) for t in targets], [3, 1])
        self.assertEqual([len(t["labels"]) for t in targets], [3, 1])
        with self.assertRaisesRegex(KeyError, "detection_targets: the batch has none"):
            stoker.detection_targets({"image": batch["image"]})


class TargetsWorkerKilledTest(SceneCluster):
    """A worker dies mid-epoch (SIGKILL): its leased batches go to the other worker."""

    def test_a_worker_killed_mid_epoch_loses_and_duplicates_nothing(self):
        seen = {}
        with self.loader(prefetch_bytes=2 * BATCH * 3 * 4 * HEIGHT * WIDTH) as loader:
            for n, batch in enumerate(loader):
                self.check_batch(batch, seen)
                if n == 2:
                    self.cluster.kill_worker(0)
        self.assertEqual(seen, {i: 1 for i in range(SAMPLES)})


def main():
    def on_alarm(signum, frame):
        raise TimeoutError("targets_loader_test: over 170 s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(170)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
