"""stoker.Loader: a job's batches for one trainer rank, as torch tensors that share memory with
the received batches (DLPack, no copy).

    loader = stoker.Loader(coordinator="127.0.0.1:7070", dataset=10_000,
                           pipeline="to_float, gaussian_blur(ksize=11)*10", batch_size=64)
    for epoch in range(loader.epochs):
        for images, labels in loader:      # the rest of the current epoch
            ...                            # images float32 [N, C, H, W], labels int64 [N]

Iterating the loader yields the rest of the current epoch and then stops (StopIteration), like a
torch DataLoader; iterating again starts the next epoch. Once every epoch was delivered an
iteration yields nothing; loader.next_batch() (across epochs) raises EndOfJobError instead.
"""

import os

import torch
import torch.utils.dlpack

from . import _stoker
from .torchvision_translate import from_torchvision

_ARGS_DOC = """
    coordinator:  "host:port" of the coordinator.
    dataset:      int N (synthetic images 0..N-1), a dict of SyntheticSource fields
                  ({"num_samples", "height", "width", "channels", "num_classes"}; defaults
                  224, 224, 3, 1000), or a str: a shards manifest path or URL (stoker-pack).
    pipeline:     a str in the text syntax ("to_float, gaussian_blur(ksize=11)*10"), a list of
                  op strings (["to_float", "gaussian_blur(ksize=11)*10"]) or a stoker.Pipeline
                  (stoker.from_torchvision); default "to_float".
    transform:    instead of pipeline: a torchvision transform (Compose of supported transforms),
                  translated by stoker.from_torchvision, with decode first when the dataset is a
                  manifest (encoded images, as a PIL loader would open them).
    batch_size, rank, world_size, epochs, seed, drop_last: as in JobSpec.
    max_bad_sample_fraction: the largest fraction of a rank's samples of one epoch that may be
                  unreadable (each replaced by the next good one) before the job fails with
                  DATA_LOSS; in [0, 1]; None (default): the coordinator's default, 0.01.
    shuffle:      "global" (default), "block" (with shuffle_block), "shard_window" (a manifest
                  dataset read from object storage: windows of shuffle_window_shards shards,
                  each shard read once an epoch; docs/storage.md) or "none".
    job_name:     the job's name; default derived from the spec (the same in every rank, plus
                  $TORCHELASTIC_RUN_ID under torchrun). A finished job's name cannot be reused:
                  pass a new job_name (or seed) to run the same spec again.
    prefetch_bytes: the client's prefetch budget in bytes (default 256 MiB).
    layout:       "chw" or "hwc" of the worker's output; default "chw", or "hwc" when converting.
    dtype:        "auto" (what the pipeline produces), "uint8", "float32", "float16" or
                  "bfloat16" (the 16-bit floats are rounded to nearest even from float32 on the
                  worker; images arrive as torch.float16 / torch.bfloat16, zero copy).
    device:       "cpu" (default; batches as received, zero copy) or "cuda[:N]" (uint8 HWC
                  batches converted to float32 NCHW on that GPU by the CUDA feeder; needs a CUDA
                  build and a GPU, else FailedPreconditionError).
    to_float:     on "cpu", convert uint8 HWC batches to float32 NCHW ((x/255 - mean)/std).
    mean, std:    per-channel normalization of the conversion (both or neither).
    resident_batches: converted batches alive at once (holding more blocks the next one).
    tail:         where the pipeline's to_float/normalize tail runs: "auto" (default; the
                  coordinator places it in this process when the pipeline ends in to_float, then
                  normalize ops only, without mixup/cutmix: the workers send uint8 HWC, 4x fewer
                  bytes than float32, and this process runs the tail on each batch, giving
                  exactly the tensors the workers would have sent), "worker" or "client".
    tail_on_client: tail="client" (kept for existing callers).
    compression:  payload compression of the worker streams: "none" (default), "lz4", "zstd",
                  "zstd:LEVEL" (-7..19) or "auto" (per stream, from the measured link rate and
                  the CPU each side spends; see
                  docs/decisions/0030-stream-compression-auto-and-metrics.md). A worker that
                  does not offer the codec sends raw payloads. Anything else: ValueError naming
                  compression.
    ordered:      yield batches in the rank's plan order (a resumed ordered run continues exactly
                  where an uninterrupted one would be); default: as they arrive.
    return_indices: yield (images, labels, sample_indices) instead of (images, labels).
    mixup, cutmix: batch-level MixUp / CutMix after the per-sample ops (torchvision v2's
                  MixUp(alpha, num_classes) / CutMix(alpha, num_classes)): a dict
                  {"alpha": 1.0, "num_classes": K} or an object with .alpha and .num_classes (a
                  torchvision.transforms.v2.MixUp / CutMix). With both, each batch uses one of
                  them (timm's switch, probability 0.5). Labels are then float32 [N, K] soft
                  labels instead of int64 [N]. The pipeline text may say the same itself
                  ("..., mixup(alpha=0.2, num_classes=1000)"); a torchvision Compose cannot hold
                  them (they transform batches), hence these arguments.
    local_threads: hybrid mode: this many producer threads in this process, private to this
                  loader, besides the remote workers (0 = none); a job can run with no remote
                  worker at all.
    local_tls_cert, local_tls_key: hybrid mode under TLS: the in-process producer's
                  certificate (role worker) and key; it trusts tls_ca.
    tls_cert, tls_key, tls_ca: this trainer's certificate and key and the CA bundle (PEM files;
                  docs/security.md). Required: these, or tls_ca with bearer_token_file, or
                  insecure.
    bearer_token_file: a file with this trainer's bearer token ("trainer:<token>"), sent over
                  TLS instead of (or beside) a client certificate.
    insecure:     plaintext without authentication: only when asked for explicitly.
"""


class Batch:
    """One received batch: images and labels as torch tensors over the batch's own memory."""

    def __init__(self, raw):
        self.raw = raw  # stoker._stoker.Batch: shape, dtype, layout, epoch, _payload_address ...
        self.images = torch.utils.dlpack.from_dlpack(raw.images_dlpack())
        # int64 [N]; with MixUp/CutMix the soft labels, float32 [N, num_classes].
        self.hard_labels = torch.utils.dlpack.from_dlpack(raw.labels_dlpack())
        self.labels = (torch.utils.dlpack.from_dlpack(raw.soft_labels_dlpack())
                       if raw.num_classes > 0 else self.hard_labels)

    @property
    def sample_indices(self):
        """Dataset index of each sample, int64 [N] (a copy)."""
        return torch.tensor(self.raw.sample_indices, dtype=torch.int64)

    @property
    def epoch(self):
        return self.raw.epoch

    @property
    def batch_index(self):
        return self.raw.batch_index


def _dataset_fields(dataset):
    if isinstance(dataset, bool):
        raise TypeError("dataset: expected int, dict or str")
    if isinstance(dataset, int):
        return {"num_samples": dataset}
    if isinstance(dataset, str):
        return {"manifest": dataset}
    if isinstance(dataset, dict):
        allowed = {"num_samples", "height", "width", "channels", "num_classes"}
        unknown = set(dataset) - allowed
        if unknown:
            raise ValueError(f"dataset: unknown keys {sorted(unknown)}; known: {sorted(allowed)}")
        return dict(dataset)
    raise TypeError(f"dataset: expected int, dict or str, got {type(dataset).__name__}")


def _pipeline_text(pipeline, transform, encoded):
    if transform is not None:
        if pipeline is not None:
            raise ValueError("pipeline, transform: give one of them, not both")
        return from_torchvision(transform, decode=encoded).text
    if pipeline is None:
        return "to_float"
    if isinstance(pipeline, (list, tuple)):
        return ", ".join(pipeline)
    return str(pipeline)


def _batch_mix_text(name, spec):
    """The text form of the Loader's mixup= / cutmix= argument (None: "")."""
    if spec is None:
        return ""
    if isinstance(spec, dict):
        unknown = set(spec) - {"alpha", "num_classes"}
        if unknown:
            raise ValueError(f"{name}: unknown keys {sorted(unknown)}; known: alpha, num_classes")
        alpha, num_classes = spec.get("alpha", 1.0), spec.get("num_classes")
    elif hasattr(spec, "alpha") and hasattr(spec, "num_classes"):
        alpha, num_classes = spec.alpha, spec.num_classes
    else:
        raise TypeError(f"{name}: expected a dict {{'alpha', 'num_classes'}} or an object with "
                        f".alpha and .num_classes (torchvision.transforms.v2.{_class_name(name)}), "
                        f"got {type(spec).__name__}")
    if num_classes is None:
        raise ValueError(f"{name}: num_classes is required")
    return f"{name}(alpha={float(alpha)!r}, num_classes={int(num_classes)})"


def _class_name(name):
    return {"mixup": "MixUp", "cutmix": "CutMix"}[name]


class Loader:
    __doc__ = "Streams one rank's batches of a Stoker job.\n\nArguments:" + _ARGS_DOC

    def __init__(self, coordinator, dataset, pipeline=None, batch_size=64, rank=0,
                 world_size=1, epochs=1, seed=0, shuffle="global", shuffle_block=1024,
                 shuffle_window_shards=16,
                 drop_last=False, max_bad_sample_fraction=None, job_name=None,
                 prefetch_bytes=256 << 20, layout=None,
                 dtype="auto", device="cpu", to_float=False, mean=None, std=None,
                 resident_batches=4, tail_on_client=False, compression="none", ordered=False,
                 tail="auto",
                 return_indices=False,
                 local_threads=0,
                 transform=None, tls_cert=None, tls_key=None, tls_ca=None,
                 bearer_token_file=None, insecure=False, local_tls_cert=None,
                 local_tls_key=None, mixup=None, cutmix=None):
        config = _stoker.LoaderConfig()
        config.coordinator = coordinator
        for key, value in _dataset_fields(dataset).items():
            setattr(config, key, value)
        config.pipeline = ", ".join(
            part for part in (_pipeline_text(pipeline, transform, isinstance(dataset, str)),
                              _batch_mix_text("mixup", mixup), _batch_mix_text("cutmix", cutmix))
            if part)
        converts = to_float or device != "cpu"
        config.layout = layout if layout is not None else ("hwc" if converts else "chw")
        config.dtype = dtype
        config.batch_size = batch_size
        config.rank = rank
        config.world_size = world_size
        config.epochs = epochs
        config.seed = seed
        config.shuffle = shuffle
        config.shuffle_block = shuffle_block
        config.shuffle_window_shards = shuffle_window_shards
        config.drop_last = drop_last
        config.max_bad_sample_fraction = max_bad_sample_fraction
        config.job_name = job_name or ""
        config.run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
        config.prefetch_bytes = prefetch_bytes
        config.device = device
        config.to_float = to_float
        config.mean = list(mean or [])
        config.std = list(std or [])
        config.resident_batches = resident_batches
        config.tail_on_client = tail_on_client
        config.tail = tail
        config.compression = compression
        config.ordered = ordered
        config.local_threads = local_threads
        config.tls_cert = tls_cert or ""
        config.tls_key = tls_key or ""
        config.tls_ca = tls_ca or ""
        config.bearer_token_file = bearer_token_file or ""
        config.insecure = insecure
        config.local_tls_cert = local_tls_cert or ""
        config.local_tls_key = local_tls_key or ""
        self._return_indices = return_indices
        config.validate()  # bad arguments and unusable devices raise here
        self._config = config
        self._opened = None  # the C++ loader, opened on first use (after load_state_dict)

    @property
    def _loader(self):
        if self._opened is None:
            self._opened = _stoker.Loader(self._config)
        return self._opened

    # --- iteration ---
    def batches(self):
        """The rest of the current epoch as stoker.Batch objects."""
        for raw in self._loader.epoch():
            yield Batch(raw)

    def __iter__(self):
        for batch in self.batches():
            if self._return_indices:
                yield batch.images, batch.labels, batch.sample_indices
            else:
                yield batch.images, batch.labels

    def __len__(self):
        """Batches per epoch for this rank."""
        return self._loader.batches_per_epoch

    def next_batch(self):
        """The next stoker.Batch across epochs; EndOfJobError after the last one."""
        return Batch(self._loader.next())

    # --- state ---
    @property
    def epochs(self):
        return self._loader.epochs

    @property
    def current_epoch(self):
        return self._loader.current_epoch

    @property
    def batches_per_epoch(self):
        return self._loader.batches_per_epoch

    @property
    def job_name(self):
        return self._loader.job_name

    @property
    def job_id(self):
        return self._loader.job_id

    @property
    def device(self):
        return self._loader.device

    # --- checkpoints ---
    def state_dict(self):
        """Where this rank stands, to save beside the model checkpoint: {"resume_token": bytes}
        (a few dozen bytes in ordered mode). It covers exactly the batches yielded so far."""
        return {"resume_token": self._loader.resume_token()}

    def load_state_dict(self, state):
        """Continues from a checkpoint. `state` is this rank's state_dict() from the checkpoint,
        or, when the world size changed, the list of every old rank's state_dict() (with a new
        job_name). The job is opened on first use, so calling this before iterating opens it
        straight from the token(s); later, it reopens the loader from them."""
        states = state if isinstance(state, (list, tuple)) else [state]
        tokens = []
        for s in states:
            if not isinstance(s, dict) or not isinstance(s.get("resume_token"), bytes):
                raise TypeError("load_state_dict: expected state_dict() output or a list of them")
            tokens.append(s["resume_token"])
        if self._opened is not None:
            self._opened.stop()
            self._opened = None
        self._config.resume_tokens = tokens

    def stats(self):
        """The loader's counters, every LoaderStats field (trainer_client/loader.h) by its name,
        plus data_wait_fraction; "workers" is a list of dicts, one per worker, with every
        WorkerReceiveStats field."""
        return self._loader.stats()

    def stop(self):
        """Ends the streams; batches already returned stay valid. Idempotent."""
        if self._opened is not None:
            self._opened.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
