"""The Python API's conventions against a local cluster of real processes (stoker.LocalCluster:
a coordinator and 2 workers on 127.0.0.1, plaintext).

    /usr/bin/python3 tests/python/python_api_test.py BUILD_DIR

Checks: `import stoker` and a whole epoch with torch unimportable (NumPy arrays); batches as
DLPack producers taken by np.from_dlpack / torch.from_dlpack without a copy, valid after the
loader moved on and stopped; state_dict() taken mid-epoch in one process and loaded in a new
process, with the same world size and with another (2 -> 1, 1 -> 2), delivers every sample
exactly once; the IterableDataset adapter under DataLoader(batch_size=None); exceptions with
the exact status code; the typed, documented surface (help(), the .pyi stubs, py.typed).
Bounded: an alarm fails the run after 170 s; every child process has a timeout.
"""

import ast
import gc
import inspect
import json
import os
import pickle
import pydoc
import signal
import subprocess
import sys
import time
import unittest

BUILD_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else "build")
PACKAGE_PARENT = os.path.join(BUILD_DIR, "trainer_client", "python")
sys.path.insert(0, PACKAGE_PARENT)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.utils.data  # noqa: E402

import stoker  # noqa: E402
import stoker.torch  # noqa: E402
from stoker import _stoker  # noqa: E402

NUM_SAMPLES = 128  # 16 batches: even splits over 1 and 2 ranks, before and after a resume
BATCH = 8
DATASET = {"num_samples": NUM_SAMPLES, "height": 8, "width": 6, "channels": 3,
           "num_classes": 5}
CHILD_TIMEOUT_S = 60

# Run by a child process: reads `take` batches (None: the rest of the job) of each listed rank, from the state in `load` when given, and prints
# {"indices": {rank: [[epoch, [index...]]...]}, "states": {rank: state_dict}} as JSON (tokens
# hex).
CHILD = r"""
import json, pickle, sys
sys.path.insert(0, sys.argv[1])
import stoker
spec = json.loads(sys.argv[2])
states = pickle.loads(bytes.fromhex(spec["load"])) if spec.get("load") else None
out = {"indices": {}, "states": {}}
for rank in spec["ranks"]:
    loader = stoker.Loader(spec["coordinator"], spec["dataset"], "to_float",
                           tls=stoker.TlsOptions(insecure=True), batch_size=spec["batch"],
                           rank=rank, world_size=spec["world_size"], epochs=spec["epochs"],
                           seed=spec["seed"], job_name=spec["job_name"], tensors="numpy")
    if states is not None:
        loader.load_state_dict(states if spec["all_ranks"] else states[rank])
    got = []
    while spec["take"] is None or len(got) < spec["take"]:
        try:
            batch = loader.next_batch()
        except stoker.EndOfJobError:
            break
        got.append([batch.epoch, [int(i) for i in batch.sample_indices]])
    out["indices"][rank] = got
    out["states"][rank] = loader.state_dict()["resume_token"].hex()
    loader.stop()
print(json.dumps(out))
"""


def unique_seed():
    return int(time.time() * 1000) % (1 << 40) + os.getpid()


class PythonApiTest(unittest.TestCase):
    cluster = None

    @classmethod
    def setUpClass(cls):
        cls.cluster = stoker.LocalCluster(BUILD_DIR, workers=2).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()

    def loader(self, **kwargs):
        args = dict(coordinator=self.cluster.address, dataset=DATASET, pipeline="to_float",
                    batch_size=BATCH, epochs=1, seed=unique_seed(), tls=self.cluster.tls)
        args.update(kwargs)
        return stoker.Loader(**args)

    def run_python(self, code, *argv):
        done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, timeout=CHILD_TIMEOUT_S)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    # --- any torch, no torch ---
    def test_imports_and_runs_without_torch(self):
        code = r"""
import sys
sys.modules["torch"] = None  # import torch raises ImportError
sys.path.insert(0, sys.argv[1])
import numpy as np
import stoker
dataset = {"num_samples": 64, "height": 8, "width": 6, "channels": 3}
loader = stoker.Loader(sys.argv[2], dataset, "to_float", tls=stoker.TlsOptions(insecure=True),
                       batch_size=8, seed=int(sys.argv[3]))
assert loader.tensor_type == "numpy", loader.tensor_type
seen = []
for images, labels in loader:
    assert isinstance(images, np.ndarray) and images.dtype == np.float32, images
    assert images.shape == (8, 3, 8, 6) and labels.dtype == np.int64
    seen += labels.tolist()
assert len(seen) == 64, len(seen)
try:
    import stoker.torch
    raise SystemExit("stoker.torch imported without torch")
except ImportError:
    pass
try:
    stoker.Loader(sys.argv[2], 64, tls=stoker.TlsOptions(insecure=True), tensors="torch")
    raise SystemExit("tensors='torch' accepted without torch")
except ImportError as error:
    assert "tensors='torch'" in str(error), error
print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))
"""
        out = self.run_python(code, PACKAGE_PARENT, self.cluster.address, str(unique_seed()))
        self.assertEqual(out.strip(), "['torch']")  # only the shim: nothing of torch loaded

    def test_batches_are_dlpack_producers_zero_copy_owned_by_the_consumer(self):
        loader = self.loader(pipeline="", dtype="uint8", layout="hwc", tensors="numpy",
                             ordered=True)
        batch = loader.next_batch()
        address = batch.raw._payload_address
        self.assertEqual(batch.__dlpack_device__(), (1, 0))
        array = np.from_dlpack(batch)
        tensor = torch.from_dlpack(batch.images_dlpack)
        self.assertEqual(array.ctypes.data, address)
        self.assertEqual(tensor.data_ptr(), address)
        self.assertEqual(batch.images.ctypes.data, address)  # tensors="numpy"
        self.assertEqual(array.shape, (BATCH, 8, 6, 3))
        self.assertEqual(batch.images_dlpack.shape, array.shape)
        labels = np.from_dlpack(batch.labels_dlpack)
        self.assertEqual(labels.tolist(), [i % 5 for i in batch.raw.sample_indices])
        expected = array.copy()
        with self.assertRaises(BufferError):
            batch.__dlpack__(copy=True)
        # The loader moves on through the epoch and stops; the consumers still hold the memory.
        del batch
        rest = sum(1 for _ in loader.batches())
        self.assertEqual(rest, NUM_SAMPLES // BATCH - 1)
        loader.stop()
        del loader
        gc.collect()
        self.assertEqual(array.ctypes.data, address)
        self.assertTrue(np.array_equal(array, expected))
        self.assertTrue(np.array_equal(tensor.numpy(), expected))

    # --- state_dict in a new process ---
    def run_child(self, **spec):
        spec = dict(dict(coordinator=self.cluster.address, dataset=DATASET, batch=BATCH,
                         epochs=1, load=None, all_ranks=False), **spec)
        return json.loads(self.run_python(CHILD, PACKAGE_PARENT, json.dumps(spec)))

    def checkpoint(self, child):
        """The child's state_dicts, pickled (as saved beside a model), by rank."""
        ranks = sorted(int(r) for r in child["states"])
        states = [{"resume_token": bytes.fromhex(child["states"][str(r)])} for r in ranks]
        return pickle.dumps(states).hex()

    def samples_of(self, *children, epoch=0):
        return sorted(i for child in children for batches in child["indices"].values()
                      for e, indices in batches if e == epoch for i in indices)

    def test_state_dict_resumes_in_a_new_process_with_the_same_world_size(self):
        seed = unique_seed()
        job = dict(seed=seed, job_name=f"resume-same-{seed}", world_size=1, ranks=[0],
                   epochs=2)
        first = self.run_child(take=5, **job)
        self.assertEqual(len(first["indices"]["0"]), 5)
        second = self.run_child(take=None, load=self.checkpoint(first), **job)
        self.assertEqual(self.samples_of(first, second), list(range(NUM_SAMPLES)))
        self.assertEqual(self.samples_of(second, epoch=1), list(range(NUM_SAMPLES)))

    def test_state_dict_resumes_in_a_new_process_with_another_world_size(self):
        for old_ranks, new_ranks in ((2, 1), (1, 2)):
            with self.subTest(old=old_ranks, new=new_ranks):
                seed = unique_seed()
                first = self.run_child(take=6 // old_ranks, seed=seed, world_size=old_ranks,
                                       ranks=list(range(old_ranks)),
                                       job_name=f"resize-{old_ranks}-{seed}")
                # Another world size is another job: every old rank's state, a new name.
                second = self.run_child(take=None, seed=seed, world_size=new_ranks,
                                        ranks=list(range(new_ranks)), all_ranks=True,
                                        load=self.checkpoint(first),
                                        job_name=f"resize-{old_ranks}-to-{new_ranks}-{seed}")
                self.assertEqual(sum(len(b) for b in second["indices"].values()),
                                 NUM_SAMPLES // BATCH - 6)
                self.assertEqual(self.samples_of(first, second), list(range(NUM_SAMPLES)))

    # --- torch.utils.data ---
    def test_iterable_dataset_under_a_torch_data_loader(self):
        loader = self.loader(return_indices=True, tensors="torch")
        dataset = loader.as_iterable_dataset()
        self.assertIsInstance(dataset, torch.utils.data.IterableDataset)
        self.assertIsInstance(dataset, stoker.torch.StokerIterableDataset)
        data = torch.utils.data.DataLoader(dataset, batch_size=None)
        self.assertEqual(len(data), NUM_SAMPLES // BATCH)
        seen = []
        for images, labels, indices in data:
            self.assertIsInstance(images, torch.Tensor)
            self.assertEqual(tuple(images.shape), (BATCH, 3, 8, 6))
            self.assertEqual(labels.tolist(), [i % 5 for i in indices.tolist()])
            seen.extend(indices.tolist())
        self.assertEqual(sorted(seen), list(range(NUM_SAMPLES)))
        self.assertEqual(list(data), [])  # the job's only epoch is done
        self.assertEqual(dataset.state_dict().keys(), {"resume_token"})
        loader.stop()
        with self.assertRaisesRegex(ValueError, "tensors='torch'"):
            stoker.torch.StokerIterableDataset(self.loader(tensors="numpy"))

    # --- exceptions ---
    def test_errors_carry_the_status_code_and_message(self):
        with self.loader(world_size=20000) as loader:
            with self.assertRaises(stoker.InvalidArgumentError) as raised:
                len(loader)  # opens the job: the coordinator refuses it
        error = raised.exception
        self.assertEqual((error.code, error.code_number), ("INVALID_ARGUMENT", 3))
        self.assertIn("spec.world_size: 20000, over the limit of 16384 (--max-world-size)",
                      error.message)
        self.assertEqual(str(error), "INVALID_ARGUMENT: " + error.message)
        self.assertIsInstance(error, ValueError)
        seed = unique_seed()
        self.assertEqual(len(self.loader(seed=seed, job_name=f"taken-{seed}")),
                         NUM_SAMPLES // BATCH)
        with self.assertRaises(stoker.AlreadyExistsError) as raised:
            len(self.loader(seed=seed + 1, job_name=f"taken-{seed}"))
        self.assertEqual((raised.exception.code, raised.exception.code_number),
                         ("ALREADY_EXISTS", 6))
        copy = pickle.loads(pickle.dumps(raised.exception))
        self.assertEqual((type(copy), copy.code, copy.message),
                         (stoker.AlreadyExistsError, "ALREADY_EXISTS", raised.exception.message))

    def test_decoded_cache_switch_reaches_the_job_spec_and_the_job_opens(self):
        for value, name in ((True, "on"), (False, "off"), (None, ""), ("always", "always"),
                            ("auto", "auto")):
            self.assertEqual(self.loader(decoded_cache=value)._config.decoded_cache, name)
        with self.assertRaisesRegex(TypeError, "decoded_cache: expected a bool"):
            self.loader(decoded_cache=1)
        with self.assertRaisesRegex(ValueError,
                                    "decoded_cache: must be 'auto', 'on', 'off' or 'always'"):
            len(self.loader(decoded_cache="sometimes"))
        # A synthetic (decoded) dataset has no decode to cache: the job runs as any other.
        self.assertEqual(len(self.loader(decoded_cache=True)), NUM_SAMPLES // BATCH)

    def test_jobs_sharing_a_sweep_seed_read_the_same_blocks_in_step(self):
        block = 4 * BATCH  # 4 blocks of 32 samples

        def blocks_in_plan_order(seed, sweep_seed):
            with self.loader(seed=seed, sweep_seed=sweep_seed, shuffle="block",
                             shuffle_block=block, ordered=True, return_indices=True) as loader:
                order = [i for _, _, indices in loader for i in indices.tolist()]
            self.assertEqual(sorted(order), list(range(NUM_SAMPLES)))
            return order, [sorted(order[p:p + block]) for p in range(0, NUM_SAMPLES, block)]

        sweep = unique_seed()
        first, first_blocks = blocks_in_plan_order(1, sweep)
        second, second_blocks = blocks_in_plan_order(2, sweep)
        self.assertEqual(second_blocks, first_blocks)  # the same block at every position
        self.assertNotEqual(second, first)  # each job its own order inside the blocks
        with self.assertRaises(stoker.InvalidArgumentError) as raised:
            len(self.loader(sweep_seed=sweep))  # the default shuffle, global, has no blocks
        self.assertIn("sweep_seed: aligns blocks or shard windows", raised.exception.message)

    # --- the typed, documented surface ---
    def test_every_loader_argument_is_typed_and_documented(self):
        parameters = inspect.signature(stoker.Loader.__init__).parameters
        text = pydoc.render_doc(stoker.Loader, renderer=pydoc.plaintext)
        for name, parameter in parameters.items():
            if name == "self":
                continue
            self.assertIsNot(parameter.annotation, inspect.Parameter.empty, name)
            self.assertRegex(stoker.Loader.__doc__, rf"\b{name}(, \w+)* \(", name)
        for option in (stoker.TlsOptions, stoker.ConvertOptions, stoker.HybridOptions):
            self.assertIn(option.__name__, text)
            for field in option.__dataclass_fields__.values():
                self.assertIsNot(field.type, inspect.Parameter.empty)

    def test_stubs_cover_the_extension(self):
        package = os.path.dirname(stoker.__file__)
        self.assertTrue(os.path.isfile(os.path.join(package, "py.typed")))
        with open(os.path.join(package, "_stoker.pyi")) as f:
            stub = ast.parse(f.read())
        stubbed = {node.name: {n.name if hasattr(n, "name") else n.target.id
                               for n in node.body if isinstance(n, (ast.FunctionDef,
                                                                    ast.AnnAssign))}
                   for node in stub.body if isinstance(node, ast.ClassDef)}
        functions = {node.name for node in stub.body if isinstance(node, ast.FunctionDef)}
        for name in dir(_stoker):
            value = getattr(_stoker, name)
            if name.startswith("__"):
                continue
            if isinstance(value, type):
                self.assertIn(name, stubbed)
                members = {m for m in dir(value)
                           if not m.startswith("__") and not m.startswith("_pybind11")}
                self.assertEqual(members - stubbed[name], set(), name)
            elif callable(value):
                self.assertIn(name, functions)


def main():
    def on_alarm(signum, frame):
        raise TimeoutError("python_api_test: over 170 s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(170)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
