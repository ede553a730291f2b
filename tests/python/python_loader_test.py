"""Integration test of the Python module `stoker` against a local cluster of real processes
(stoker-coordinator + 2 stoker-worker on 127.0.0.1, started and stopped by stoker.LocalCluster).

    /usr/bin/python3 tests/python/python_loader_test.py BUILD_DIR

Checks: one full epoch (of two) delivers every sample index exactly once, with the batch header's
shapes and dtypes; the torch tensors share memory with the received batch (data_ptr() == the
payload address) and stay valid after the loader is gone; the second epoch through the
(images, labels, indices) iteration; EndOfJobError at the end; uint8 batches and their host
conversion; argument errors; a coordinator list whose first address is dead; hybrid mode (HybridOptions) with no remote worker; an ordered
loader resumed from state_dict() continues exactly where an uninterrupted run would. Bounded: an alarm fails the run after 150 s.
"""

import gc
import inspect
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import sys
import time
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(BUILD_DIR, "trainer_client", "python"))

import torch  # noqa: E402

import stoker  # noqa: E402
from stoker import _stoker  # noqa: E402

NUM_SAMPLES = 120
BATCH = 8
H, W, C = 16, 12, 3
NUM_CLASSES = 7
DATASET = {"num_samples": NUM_SAMPLES, "height": H, "width": W, "channels": C,
           "num_classes": NUM_CLASSES}


def unique_seed():
    # A fresh job per run: a finished job's name (derived from the spec) cannot be reused.
    return int(time.time() * 1000) % (1 << 40) + os.getpid()


class PythonLoaderTest(unittest.TestCase):
    cluster = None

    @classmethod
    def setUpClass(cls):
        # Mutual TLS with throwaway certificates (the default path); the hybrid test below runs
        # plaintext (--insecure).
        cls.certs = tempfile.mkdtemp(prefix="stoker-certs-")
        repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        subprocess.run([os.path.join(repo, "scripts", "dev-certs.sh"), cls.certs], check=True)
        cls.cluster = stoker.LocalCluster(BUILD_DIR, workers=2, tls_dir=cls.certs).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        shutil.rmtree(cls.certs, ignore_errors=True)

    def loader(self, **kwargs):
        args = dict(coordinator=self.cluster.address, dataset=DATASET, pipeline="to_float",
                    batch_size=BATCH, epochs=2, seed=unique_seed(), **self.cluster.loader_tls)
        args.update(kwargs)
        return stoker.Loader(**args)

    def test_epochs_zero_copy_and_end_of_job(self):
        loader = self.loader(pipeline=["to_float", "gaussian_blur(ksize=3, sigma=1)"],
                             return_indices=True)
        self.assertEqual(len(loader), NUM_SAMPLES // BATCH)
        self.assertEqual(loader.epochs, 2)
        self.assertTrue(loader.job_name.startswith("py-"))

        # Epoch 0 as stoker.Batch objects.
        seen = []
        kept = None
        for batch in loader.batches():
            self.assertEqual(batch.epoch, 0)
            self.assertEqual(batch.raw.dtype, "float32")
            self.assertEqual(batch.raw.layout, "chw")
            self.assertEqual(batch.images.dtype, torch.float32)
            self.assertEqual(tuple(batch.images.shape), (BATCH, C, H, W))
            self.assertEqual(tuple(batch.images.shape), tuple(batch.raw.shape))
            self.assertEqual(batch.labels.dtype, torch.int64)
            self.assertEqual(tuple(batch.labels.shape), (BATCH,))
            indices = batch.sample_indices.tolist()
            self.assertEqual(batch.labels.tolist(), [i % NUM_CLASSES for i in indices])
            # Zero copy: the tensor is the payload of the received message.
            self.assertEqual(batch.images.data_ptr(), batch.raw._payload_address)
            self.assertEqual(batch.raw.size_bytes, batch.images.numel() * 4)
            self.assertTrue(batch.images.is_contiguous())
            self.assertTrue(bool(((batch.images >= 0) & (batch.images <= 1)).all()))
            seen.extend(indices)
            kept = (batch.images, batch.images.clone(), batch.labels, batch.labels.clone())
        self.assertEqual(sorted(seen), list(range(NUM_SAMPLES)))
        self.assertEqual(loader.current_epoch, 1)

        # Epoch 1 through the plain iteration (return_indices=True).
        seen = []
        for images, labels, indices in loader:
            self.assertEqual(tuple(images.shape), (BATCH, C, H, W))
            self.assertEqual(labels.tolist(), [i % NUM_CLASSES for i in indices.tolist()])
            seen.extend(indices.tolist())
        self.assertEqual(sorted(seen), list(range(NUM_SAMPLES)))

        # The end of the job: iteration yields nothing, next_batch raises OUT_OF_RANGE.
        self.assertEqual(list(loader), [])
        with self.assertRaises(stoker.EndOfJobError) as raised:
            loader.next_batch()
        self.assertEqual(raised.exception.code, "OUT_OF_RANGE")
        self.assertIsInstance(raised.exception, stoker.StokerError)
        stats = loader.stats()
        self.assertEqual(stats["batches_delivered"], 2 * NUM_SAMPLES // BATCH)

        # Tensors outlive the loader and the batch objects: the deleter keeps the message alive.
        loader.stop()
        del loader
        gc.collect()
        images, images_copy, labels, labels_copy = kept
        self.assertTrue(torch.equal(images, images_copy))
        self.assertTrue(torch.equal(labels, labels_copy))

    def test_a_dead_first_coordinator_address_is_passed_over(self):
        # Replicas listed in order, the first one down (a port nothing listens on): every call
        # moves on to the next address within the call, and the job runs.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            dead = f"127.0.0.1:{probe.getsockname()[1]}"
        loader = self.loader(coordinator=f"{dead},{self.cluster.address}", epochs=1,
                             return_indices=True)
        seen = []
        for _, _, indices in loader:
            seen.extend(indices.tolist())
        self.assertEqual(sorted(seen), list(range(NUM_SAMPLES)))
        loader.stop()
        with self.assertRaises(stoker.InvalidArgumentError) as raised:
            self.loader(coordinator=f"{self.cluster.address},nohost")
        self.assertIn("coordinator: entry 2 of", str(raised.exception))

    def test_uint8_batches_and_host_conversion(self):
        seed = unique_seed()
        raw_images = {}
        with self.loader(pipeline="", dtype="uint8", layout="hwc", epochs=1, seed=seed,
                         job_name=f"py-test-u8-{seed}") as loader:
            for batch in loader.batches():
                self.assertEqual(batch.images.dtype, torch.uint8)
                self.assertEqual(tuple(batch.images.shape), (BATCH, H, W, C))
                self.assertEqual(batch.images.data_ptr(), batch.raw._payload_address)
                for i, index in enumerate(batch.raw.sample_indices):
                    raw_images[index] = batch.images[i].clone()
        self.assertEqual(len(raw_images), NUM_SAMPLES)

        mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
        with self.loader(pipeline="", dtype="uint8", epochs=1, seed=seed,
                         convert=stoker.ConvertOptions(mean=mean, std=std),
                         job_name=f"py-test-f32-{seed}") as loader:
            self.assertEqual(loader.device, "cpu")
            count = 0
            for batch in loader.batches():
                self.assertTrue(batch.raw.converted)
                self.assertEqual(batch.images.dtype, torch.float32)
                self.assertEqual(tuple(batch.images.shape), (BATCH, C, H, W))
                # Zero copy from the feeder's output slot.
                self.assertEqual(batch.images.data_ptr(), batch.raw._images_address)
                m = torch.tensor(mean).view(C, 1, 1)
                s = torch.tensor(std).view(C, 1, 1)
                for i, index in enumerate(batch.raw.sample_indices):
                    expected = (raw_images[index].permute(2, 0, 1).float() / 255 - m) / s
                    self.assertTrue(torch.allclose(batch.images[i], expected, atol=1e-5))
                count += 1
                del batch  # gives the feeder slot back (resident_batches)
            self.assertEqual(count, NUM_SAMPLES // BATCH)

    def test_half_dtypes_and_tail_placement(self):
        seed = unique_seed()
        pipeline = "to_float, normalize(mean=[0.5,0.4,0.3], std=[0.2,0.25,0.3])"

        def payloads(**kwargs):
            out = {}
            with self.loader(pipeline=pipeline, epochs=1, seed=seed, ordered=True,
                             **kwargs) as loader:
                for batch in loader.batches():
                    self.assertEqual(tuple(batch.images.shape), (BATCH, C, H, W))
                    self.assertEqual(batch.images.data_ptr(), batch.raw._payload_address)
                    out[tuple(batch.raw.sample_indices)] = batch.images.clone()
            self.assertEqual(len(out), NUM_SAMPLES // BATCH)
            return out

        f32 = payloads(tail="worker", job_name=f"py-test-tail-f32-{seed}")
        for dtype, torch_dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
            half = payloads(dtype=dtype, tail="worker", job_name=f"py-test-{dtype}-{seed}")
            for key, images in half.items():
                self.assertEqual(images.dtype, torch_dtype)
                # Round to nearest even, as torch's own conversion.
                self.assertTrue(torch.equal(images, f32[key].to(torch_dtype)), dtype)
        # The tail run here: asked for, and placed by the coordinator (tail="auto", the default).
        for tail in (payloads(tail="client", job_name=f"py-test-tail-{seed}"),
                     payloads(job_name=f"py-test-tail-auto-{seed}")):
            self.assertEqual(tail.keys(), f32.keys())
            for key, images in tail.items():
                self.assertEqual(images.dtype, torch.float32)
                self.assertTrue(torch.equal(images, f32[key]))  # bit for bit
        with self.assertRaisesRegex(stoker.StokerError, "tail: a client tail"):
            self.loader(pipeline="to_float, gaussian_blur(ksize=3, sigma=1)",
                        tail="client").next_batch()
        # The deprecated spelling still asks for the same placement, with a warning.
        with self.assertWarnsRegex(DeprecationWarning, 'pass tail="client"'):
            with self.assertRaisesRegex(stoker.StokerError, "tail: a client tail"):
                self.loader(pipeline="to_float, gaussian_blur(ksize=3, sigma=1)",
                            tail_on_client=True).next_batch()

    def test_argument_errors(self):
        with self.assertRaises(stoker.InvalidArgumentError) as raised:
            self.loader(pipeline="blur(k=3)")
        self.assertIn("pipeline", str(raised.exception))
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        with self.assertRaisesRegex(ValueError, "rank: must be < world_size"):
            self.loader(rank=2, world_size=2)
        with self.assertRaisesRegex(ValueError, "shuffle"):
            self.loader(shuffle="sometimes")
        with self.assertRaisesRegex(ValueError, "device"):
            self.loader(device="tpu")
        with self.assertRaisesRegex(ValueError, "dataset"):
            self.loader(dataset={"num_samples": 8, "colors": 3})
        with self.assertRaisesRegex(ValueError, "compression: unknown compression 'gzip'"):
            self.loader(compression="gzip")

    def test_compressed_streams_deliver_the_raw_bytes(self):
        seed = unique_seed()

        def run(compression):
            out = {}
            with self.loader(pipeline="", dtype="uint8", epochs=1, seed=seed, ordered=True,
                             compression=compression,
                             job_name=f"py-test-compression-{compression}-{seed}") as loader:
                for batch in loader.batches():
                    out[tuple(batch.raw.sample_indices)] = batch.images.clone()
                stats = loader.stats()
            self.assertEqual(len(out), NUM_SAMPLES // BATCH)
            wire = sum(w["wire_bytes"] for w in stats["workers"])
            raw = sum(w["bytes"] for w in stats["workers"])
            return out, wire != raw

        raw, raw_compressed = run("none")
        self.assertFalse(raw_compressed)
        for compression in ("lz4", "zstd:3"):
            payloads, compressed = run(compression)
            self.assertTrue(compressed, compression)
            self.assertEqual(payloads.keys(), raw.keys())
            for key, images in payloads.items():
                self.assertTrue(torch.equal(images, raw[key]), compression)

    def test_loader_takes_every_job_spec_field(self):
        # Every field of JobSpec (proto/stoker/v1/pipeline.proto) is a Loader argument.
        with open(os.path.join(SOURCE_DIR, "proto", "stoker", "v1", "pipeline.proto")) as f:
            body = re.search(r"message JobSpec \{(.*?)\n\}", f.read(), re.S).group(1)
        fields = re.findall(r"^\s+(?:optional\s+)?\w+\s+(\w+)\s*=\s*\d+;", body, re.M)
        self.assertIn("max_bad_sample_fraction", fields)
        parameters = inspect.signature(stoker.Loader.__init__).parameters
        self.assertEqual([f for f in fields if f not in parameters], [])

        spec = self.loader(max_bad_sample_fraction=0.25)._config.job_spec_text()
        self.assertIn("max_bad_sample_fraction: 0.25", spec)
        self.assertNotIn("max_bad_sample_fraction", self.loader()._config.job_spec_text())
        with self.assertRaisesRegex(ValueError, r"max_bad_sample_fraction: must be in \[0, 1\]"):
            self.loader(max_bad_sample_fraction=1.5)

    def test_trace_returns_the_batch_timeline_of_every_process(self):
        # Loader.trace (issue 26): StartTrace with the trainer's certificate, the window while
        # another thread consumes, every GetTrace page, Chrome Trace Event JSON.
        import json
        import threading
        dataset = dict(DATASET, num_samples=BATCH * 2000)
        # A small prefetch budget: the workers keep producing during the window.
        with self.loader(dataset=dataset, epochs=1, prefetch_bytes=1 << 16) as loader:
            loader.next_batch()  # opens the job here, not in both threads at once
            stop = threading.Event()

            def consume():
                for _ in loader:
                    if stop.wait(0.002):
                        return
            consumer = threading.Thread(target=consume)
            consumer.start()
            try:
                path = os.path.join(self.certs, "trace.json")
                text = loader.trace(2, path=path)
            finally:
                stop.set()
                consumer.join(timeout=30)
            with self.assertRaises(stoker.InvalidArgumentError):
                loader.trace(0)
        with open(path) as f:
            self.assertEqual(f.read(), text)
        events = json.loads(text)["traceEvents"]
        names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
        self.assertIn("coordinator", names)
        self.assertIn("rank 0", names)
        self.assertTrue(any(n.startswith("worker ") for n in names), names)
        stages = {e["cat"] for e in events if e["ph"] == "X"}
        self.assertTrue({"receive", "handoff", "shard_read", "queue", "send"} <= stages, stages)

    def test_stats_carry_every_loader_stats_field(self):
        # Every member of LoaderStats and WorkerReceiveStats (trainer_client/loader.h).
        with open(os.path.join(SOURCE_DIR, "trainer_client", "loader.h")) as f:
            header = f.read()

        def members(struct):
            body = re.search(r"struct " + struct + r" \{(.*?)\n\};", header, re.S).group(1)
            return re.findall(r"^  [\w:<>]+ (\w+)(?: = [^;]+)?;", body, re.M)

        loader_fields, worker_fields = members("LoaderStats"), members("WorkerReceiveStats")
        self.assertIn("overdue_reported", loader_fields)
        self.assertIn("share", worker_fields)
        with self.loader(epochs=1) as loader:
            self.assertEqual(sum(1 for _ in loader), NUM_SAMPLES // BATCH)
            stats = loader.stats()
        self.assertEqual([f for f in loader_fields if f not in stats], [])
        self.assertGreater(stats["budget_bytes"], 0)
        self.assertGreater(stats["max_committed_bytes"], 0)
        self.assertGreaterEqual(stats["max_streams"], 1)
        self.assertTrue(stats["workers"])
        for worker in stats["workers"]:
            self.assertEqual([f for f in worker_fields if f not in worker], [])

    def test_cuda_without_gpu_is_failed_precondition(self):
        try:
            loader = self.loader(pipeline="", dtype="uint8", epochs=1, device="cuda:0")
        except stoker.FailedPreconditionError as error:
            self.assertEqual(error.code, "FAILED_PRECONDITION")
            self.assertIn("cuda", str(error).lower())
            return
        # A CUDA build on a machine with a GPU: the feeder exists; torch may lack CUDA.
        self.assertTrue(stoker.HAVE_CUDA)
        loader.stop()

    def test_hybrid_under_tls_with_the_producers_worker_certificate(self):
        with stoker.LocalCluster(BUILD_DIR, workers=0, tls_dir=self.certs) as empty:
            args = dict(coordinator=empty.address, dataset=DATASET, pipeline="to_float",
                        batch_size=BATCH, epochs=1, seed=unique_seed(), return_indices=True,
                        **empty.loader_tls)
            with self.assertRaisesRegex(ValueError,
                                        "INVALID_ARGUMENT: hybrid.cert_file: hybrid mode"):
                stoker.Loader(hybrid=stoker.HybridOptions(threads=2), **args)
            loader = stoker.Loader(
                hybrid=stoker.HybridOptions(threads=2,
                                            cert_file=os.path.join(self.certs, "worker.pem"),
                                            key_file=os.path.join(self.certs, "worker.key")),
                **args)
            indices = []
            for _, _, batch_indices in loader:
                indices.extend(batch_indices.tolist())
            self.assertEqual(sorted(indices), list(range(NUM_SAMPLES)))
            loader.stop()
        with stoker.LocalCluster(BUILD_DIR, workers=0, tls_dir=self.certs) as empty:
            # A trainer certificate as the producer's: the coordinator refuses its registration.
            rogue = stoker.Loader(coordinator=empty.address, dataset=DATASET,
                                  pipeline="to_float", batch_size=BATCH, epochs=1,
                                  seed=unique_seed(),
                                  hybrid=stoker.HybridOptions(
                                      threads=1,
                                      cert_file=os.path.join(self.certs, "trainer.pem"),
                                      key_file=os.path.join(self.certs, "trainer.key")),
                                  **empty.loader_tls)
            with self.assertRaises(stoker.StokerError) as refused:
                next(iter(rogue))
            self.assertEqual(refused.exception.code, "PERMISSION_DENIED")

    def test_hybrid_threads_without_remote_workers(self):
        with stoker.LocalCluster(BUILD_DIR, workers=0) as empty:
            loader = stoker.Loader(coordinator=empty.address, dataset=DATASET,
                                   pipeline="to_float", batch_size=BATCH, epochs=1,
                                   seed=unique_seed(), hybrid=stoker.HybridOptions(threads=2),
                                   return_indices=True,
                                   **empty.loader_tls)
            indices = []
            for _, _, batch_indices in loader:
                indices.extend(batch_indices.tolist())
            self.assertEqual(sorted(indices), list(range(NUM_SAMPLES)))
            workers = [w for w in loader.stats()["workers"] if w["batches"] > 0]
            self.assertEqual(len(workers), 1)
            self.assertTrue(workers[0]["address"].startswith("127.0.0.1:"))
            loader.stop()

    def test_ordered_state_dict_resumes_where_the_checkpoint_was(self):
        seed = unique_seed()

        def indices_of(loader, limit=None):
            out = []
            for _, _, batch_indices in loader:
                out.append(batch_indices.tolist())
                if limit is not None and len(out) == limit:
                    break
            return out

        whole = self.loader(seed=seed, epochs=1, ordered=True, return_indices=True,
                            job_name=f"whole-{seed}")
        expected = indices_of(whole)
        whole.stop()
        self.assertEqual(len(expected), NUM_SAMPLES // BATCH)

        first = self.loader(seed=seed, epochs=1, ordered=True, return_indices=True,
                            job_name=f"resumed-{seed}")
        before = indices_of(first, limit=5)
        state = first.state_dict()
        self.assertIsInstance(state["resume_token"], bytes)
        self.assertLess(len(state["resume_token"]), 200)
        first.stop()
        second = self.loader(seed=seed, epochs=1, ordered=True, return_indices=True,
                             job_name=f"resumed-{seed}")
        second.load_state_dict(state)
        after = indices_of(second)
        second.stop()
        self.assertEqual(before + after, expected)
        with self.assertRaises(TypeError):
            second.load_state_dict({"token": b""})

    def test_default_job_name_is_deterministic(self):
        def config(seed):
            c = _stoker.LoaderConfig()
            c.coordinator = "127.0.0.1:1"
            c.num_samples = 100
            c.pipeline = "to_float"
            c.seed = seed
            return c
        self.assertEqual(config(1).default_job_name(), config(1).default_job_name())
        self.assertNotEqual(config(1).default_job_name(), config(2).default_job_name())
        with_run = config(1)
        with_run.run_id = "abc"
        self.assertEqual(with_run.default_job_name(), config(1).default_job_name() + "-abc")


def main():
    def on_alarm(signum, frame):
        raise TimeoutError("python_loader_test: over 150 s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(150)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
