# Type stubs of the C++ extension stoker._stoker (trainer_client/python/stoker_module.cc,
# pipeline_binding.cc). Use the `stoker` package; these types are its building blocks.
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy

HAVE_CUDA: bool

class LoaderConfig:
    """The arguments of stoker.Loader (python_loader_config.h)."""
    coordinator: str
    tls_cert: str
    tls_key: str
    tls_ca: str
    hybrid_tls_cert: str
    hybrid_tls_key: str
    bearer_token_file: str
    insecure: bool
    manifest: str
    paths: List[str]
    fields: List[str]
    num_samples: int
    height: int
    width: int
    channels: int
    num_classes: int
    pipeline: str
    layout: str
    dtype: str
    tail: str
    batch_size: int
    rank: int
    world_size: int
    epochs: int
    seed: int
    shuffle: str
    shuffle_block: int
    shuffle_window_shards: int
    sweep_seed: int
    drop_last: bool
    decoded_cache: str
    max_bad_sample_fraction: Optional[float]
    job_name: str
    run_id: str
    prefetch_bytes: int
    device: str
    to_float: bool
    mean: List[float]
    std: List[float]
    resident_batches: int
    ordered: bool
    compression: str
    hybrid_threads: int
    resume_tokens: List[bytes]
    def __init__(self) -> None: ...
    def validate(self) -> None:
        """Raises what opening a loader with these arguments would raise before reaching the
        coordinator (bad arguments, an unusable device)."""
    def job_spec_text(self) -> str: ...
    def default_job_name(self) -> str: ...

class Batch:
    """A received batch (immutable; shares memory)."""
    def images_dlpack(self) -> Any:
        """A "dltensor" capsule over the images (the payload, or the converted tensor)."""
    def labels_dlpack(self) -> Any:
        """A "dltensor" capsule over the int64 [N] labels."""
    def soft_labels_dlpack(self) -> Any:
        """A "dltensor" capsule over the float32 [N, num_classes] soft labels (MixUp/CutMix;
        only when num_classes > 0)."""
    @property
    def images_device(self) -> Tuple[int, int]:
        """(DLDeviceType, index) of the images: (1, 0) host, (2, N) cuda:N."""
    @property
    def num_classes(self) -> int: ...
    @property
    def _payload_address(self) -> int: ...
    @property
    def _images_address(self) -> int: ...
    @property
    def converted(self) -> bool: ...
    @property
    def shape(self) -> List[int]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def layout(self) -> str: ...
    @property
    def labels(self) -> List[int]: ...
    @property
    def sample_indices(self) -> List[int]: ...
    @property
    def num_samples(self) -> int: ...
    @property
    def field_names(self) -> List[str]: ...
    def field_values(self, column: int) -> List[bytes]: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def job_id(self) -> str: ...
    @property
    def epoch(self) -> int: ...
    @property
    def batch_index(self) -> int: ...
    @property
    def worker_id(self) -> str: ...
    @property
    def produce_seconds(self) -> float: ...

class EpochIterator(Iterator[Batch]):
    """The rest of the current epoch's batches."""
    def __iter__(self) -> "EpochIterator": ...
    def __next__(self) -> Batch: ...
    @property
    def epoch(self) -> int: ...

class Loader:
    """stoker::Loader (trainer_client/loader.h); opens the job (OpenJob) when constructed."""
    def __init__(self, config: LoaderConfig) -> None: ...
    def next(self) -> Batch:
        """The next batch (across epochs); stoker.EndOfJobError after the last one."""
    def epoch(self) -> EpochIterator:
        """An iterator over the rest of the current epoch."""
    def stop(self) -> None: ...
    def stats(self) -> Dict[str, Any]: ...
    def trace(self, seconds: int, sample_one_in: int = 0) -> str:
        """The job's batch timeline for `seconds` as Chrome Trace Event JSON (StartTrace, wait,
        every GetTrace page; coordinator/coordinator_trace_client.h), with this loader's trainer
        credentials."""
    def resume_token(self) -> bytes:
        """Loader::ResumeToken(): where this rank stands, for a checkpoint."""
    @property
    def job_name(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def job_id(self) -> str: ...
    @property
    def client_id(self) -> str: ...
    @property
    def epochs(self) -> int: ...
    @property
    def current_epoch(self) -> int: ...
    @property
    def batches_per_epoch(self) -> int: ...
    @property
    def batch_bytes(self) -> int: ...
    @property
    def batch_shape(self) -> List[int]: ...

def run_pipeline(pipeline: str, sample: Any, seed: int = 0, epoch: int = 0,
                 index: int = 0) -> numpy.ndarray:
    """One sample through `pipeline` (text syntax) here, as a worker would run it."""
def explain_pipeline(pipeline: str, input: str = "375x500x3", layout: str = "hwc",
                     dtype: str = "auto", runs: int = 15) -> str:
    """stoker-ctl pipeline explain as a str."""
def draw_params(op: str, height: int, width: int, channels: int = 3, is_float: bool = False,
                seed: int = 0, epoch: int = 0, first_index: int = 0,
                count: int = 1) -> List[List[float]]:
    """Test and debug hook: the parameters one random op draws (docs/augmentations.md)."""
def op_schemas() -> List[Dict[str, Any]]:
    """The op registry (augment/op_registry.h): per op its name, batch, doc, args (name, type,
    default, doc, range) and torchvision notes; stoker.from_torchvision checks against it."""
