"""stoker.Loader: a job's batches for one trainer rank, as torch tensors or NumPy arrays that
share memory with the received batches (DLPack, no copy).

    with stoker.Loader(coordinator="127.0.0.1:7070", dataset=10_000,
                       pipeline="to_float, gaussian_blur(ksize=11)*10", batch_size=64,
                       tls=stoker.TlsOptions(insecure=True)) as loader:
        for epoch in range(loader.epochs):
            for images, labels in loader:      # the rest of the current epoch
                ...                            # images float32 [N, C, H, W], labels int64 [N]

An image-text job (a WebDataset shard set with .jpg, .txt, .json and .cls files) names the
sample fields it wants and gets a dict per batch:

    loader = stoker.Loader(coordinator, ["/data/cc3m-{000..099}.tar"], "decode, ...",
                           fields=["image", "text", "json"], tls=...)
    for batch in loader:                       # {"image": tensor, "text": [str], "json": [str]}
        ...

Iterating the loader yields the rest of the current epoch and then stops (StopIteration), like a
torch DataLoader; iterating again starts the next epoch. Once every epoch was delivered an
iteration yields nothing; loader.next_batch() (across epochs) raises EndOfJobError instead.
"""

from typing import Any, Dict, Iterator, List, Literal, Mapping, Optional, Sequence, Union

from . import _stoker
from ._config import build_config
from .batch import Batch
from .options import ConvertOptions, HybridOptions, TlsOptions
from .targets import TARGET_FORMS
from .tensors import resolve_tensor_type

Dataset = Union[int, str, Sequence[str], Mapping[str, int]]
PipelineArg = Union[str, Sequence[str], Any, None]
StateDict = Dict[str, Any]
Shuffle = Literal["global", "block", "shard_window", "none"]
Layout = Optional[Literal["chw", "hwc"]]
DType = Literal["auto", "uint8", "float32", "float16", "bfloat16"]
Tail = Literal["auto", "worker", "client"]
Tensors = Literal["auto", "torch", "numpy"]


# The defaults of the C++ LoaderConfig (python_loader_config.h, job_spec_args.h): defined there
# once, read here, so the signature cannot drift from what C++ callers get.
_DEFAULTS = _stoker.LoaderConfig()


class Loader:
    """Streams one rank's batches of a Stoker job (docs/trainer_client.md, "Python").

    The job is opened on the coordinator at first use (iteration, len(), state_dict(), a
    property), not by the constructor, which only checks the arguments (raising TypeError,
    ValueError or stoker.InvalidArgumentError naming the bad one). Failures raise
    stoker.StokerError subclasses carrying the status code (stoker/errors.py).

    Arguments (all but coordinator, dataset and pipeline are keyword-only):
      coordinator (str): "host:port" of the coordinator, or "h1:p1,h2:p2,..." of its replicas
          (calls follow the leader).
      dataset (int | str | dict): int N: synthetic images 0..N-1; a dict of SyntheticSource
          fields {"num_samples", "height", "width", "channels", "num_classes"} (defaults 224,
          224, 3, 1000); str: a shards manifest path or URL (stoker-pack); a list of str: shard
          files or globs, stoker shards or WebDataset tars (.tar), without a manifest.
      pipeline (str | list[str] | stoker.Pipeline | None): the per-sample ops, in the text
          syntax ("to_float, gaussian_blur(ksize=11)*10"), as a list of op strings, or a
          stoker.Pipeline (stoker.from_torchvision); None: "to_float".
      tls (stoker.TlsOptions): certificates, bearer token, or insecure=True (plaintext).
          Required: with none, the error names tls.cert_file.
      transform (torchvision transform | None): instead of pipeline: a torchvision Compose of
          supported transforms, translated by stoker.from_torchvision (decode first when the
          dataset is a manifest of encoded images).
      batch_size (int), rank (int), world_size (int), epochs (int), seed (int),
      drop_last (bool): as in JobSpec (proto/stoker/v1/pipeline.proto).
      shuffle (str): "global" (default), "block", "shard_window" (a manifest read from object
          storage: each shard read once an epoch; docs/storage.md) or "none".
      shuffle_block (int): the block size of shuffle="block", in samples.
      shuffle_window_shards (int): the window of shuffle="shard_window", in shards.
      sweep_seed (int): 0 (default), or the seed a sweep's jobs share: with shuffle="block" or
          "shard_window" they then read the same blocks or windows in step, each in its own order
          inside them (its `seed`), so the workers' decoded cache serves one decode to all of them.
      max_bad_sample_fraction (float | None): the largest fraction of a rank's samples of one
          epoch that may be unreadable (each replaced by the next good one) before the job
          fails with DATA_LOSS, in [0, 1]; None: the coordinator's default, 0.01.
      job_name (str | None): the job's name; None: derived from the spec (the same in every
          rank, plus $TORCHELASTIC_RUN_ID under torchrun). A finished job's name cannot be
          reused: pass a new job_name (or seed) to run the same spec again.
      layout (str | None): "chw" or "hwc" of the worker's output; None: "chw", or "hwc" when
          converting.
      dtype (str): "auto" (what the pipeline produces), "uint8", "float32", "float16" or
          "bfloat16" (16-bit floats rounded to nearest even on the worker; NumPy has no
          bfloat16: use torch tensors for it).
      tail (str): where the pipeline's to_float/normalize tail runs: "auto" (the coordinator
          places it in this process when the pipeline ends in to_float then normalize ops,
          without mixup/cutmix: the workers send uint8, 4x fewer bytes, and this process gives
          exactly the tensors they would have sent), "worker" or "client".
      tail_on_client (bool | None): deprecated, the same as tail="client" (a DeprecationWarning).
      mixup, cutmix (dict | torchvision.transforms.v2.MixUp / CutMix | None): batch-level
          MixUp / CutMix after the per-sample ops: {"alpha": 1.0, "num_classes": K} or an object
          with .alpha and .num_classes. With both, each batch uses one of them (probability
          0.5). Labels are then float32 [N, K] soft labels instead of int64 [N].
      device (str): "cpu" (default; batches as received, zero copy) or "cuda[:N]" (uint8 HWC
          batches converted to float32 NCHW on that GPU; needs a CUDA build and a GPU, else
          stoker.FailedPreconditionError). On a GPU, a pipeline that ends in to_float and
          normalize ops (tail "auto", no convert=) ships uint8 and runs that tail on the GPU,
          within 2e-5 of the CPU result (docs/decisions/0044-tail-on-the-device.md).
      convert (stoker.ConvertOptions | None): on "cpu", convert uint8 HWC batches to float32
          NCHW in this process, (x/255 - mean)/std; on CUDA the conversion's options.
      tensors (str): what the iteration and Batch.images give: "torch", "numpy", or "auto"
          (default: torch when importable, else NumPy). Either way no copy is made.
      prefetch_bytes (int): the client's prefetch budget in bytes (default 256 MiB).
      compression (str): payload compression of the worker streams: "none" (default), "lz4",
          "zstd", "zstd:LEVEL" (-7..19) or "auto" (per stream, from the measured link rate and
          CPU). A worker without the codec sends raw payloads.
      ordered (bool): yield batches in the rank's plan order (a resumed ordered run continues
          exactly where an uninterrupted one would); default: as they arrive.
      return_indices (bool): iteration yields (images, labels, sample_indices) instead of
          (images, labels); with fields, the dict has "sample_indices" too.
      fields (list[str] | None): the sample fields the job wants (JobSpec.fields,
          docs/architecture.md "Sample fields"); iteration then yields a dict per batch with
          these keys: "image" (the images tensor; must be named), "label" (the labels tensor),
          "text" (a WebDataset .txt) and "json" (a .json) as lists of str (UTF-8; invalid UTF-8
          raises UnicodeDecodeError naming the field and sample), and any other WebDataset key's
          extension ("seg.png") as a list of bytes; typed targets, moved with the image by the
          job's augmentations (stoker shards packed with them, stoker-pack --coco; the pipeline
          must be able to move them): "boxes" float32 [N_i, 4] XYXY pixels of the output
          image, "box_labels" int64 [N_i] (needs "boxes"), "masks" uint8 [N_i, H, W],
          "keypoints" float32 [N_i, K, 3], "semantic_mask" uint8 [H, W] (a label map: a
          WebDataset's .seg.png or packed; 255 where the ops filled), as lists of one tensor
          per sample (see targets=;
          stoker.detection_targets makes torchvision's (images, targets)). None: (images,
          labels) as before. A sample without a named field, or whose targets do not fit its
          image (bad_annotation), is a bad sample (replaced). Fields a dataset cannot have
          raise stoker.InvalidArgumentError naming fields[i] when the job opens.
      targets (str): how the dict carries typed targets: "list" (default; one tensor per
          sample) or "padded" (one zero-padded tensor [B, max N_i, ...] per field, and its
          counts, int64 [B], under "<name>_count", e.g. "boxes_count").
      hybrid (stoker.HybridOptions | None): producer threads in this process besides the
          remote workers (a job can run with none).
      decoded_cache (bool | str | None): JobSpec.decoded_cache: None (or "auto"): each worker
          with --decoded-cache-bytes times the job's first samples with and without its cache
          and keeps using the cheaper way over the job's epochs, where the cache cannot change
          a byte; True (or "on"): workers keep each sample's decoded prefix for later epochs and
          other jobs on the same data; "always": keep every sample, whatever its decode cost;
          False (or "off"): decode every time (docs/decisions/0081-decoded-cache.md, 0084).
    """

    def __init__(self, coordinator: str, dataset: Dataset, pipeline: PipelineArg = None, *,
                 tls: Optional[TlsOptions] = None, transform: Any = None,
                 batch_size: int = _DEFAULTS.batch_size, rank: int = _DEFAULTS.rank,
                 world_size: int = _DEFAULTS.world_size, epochs: int = _DEFAULTS.epochs,
                 seed: int = _DEFAULTS.seed, drop_last: bool = _DEFAULTS.drop_last,
                 shuffle: Shuffle = _DEFAULTS.shuffle,
                 shuffle_block: int = _DEFAULTS.shuffle_block,
                 shuffle_window_shards: int = _DEFAULTS.shuffle_window_shards,
                 sweep_seed: int = _DEFAULTS.sweep_seed,
                 max_bad_sample_fraction: Optional[float] = None,
                 job_name: Optional[str] = None, layout: Layout = None,
                 dtype: DType = _DEFAULTS.dtype, tail: Tail = _DEFAULTS.tail,
                 tail_on_client: Optional[bool] = None,
                 mixup: Any = None, cutmix: Any = None, device: str = _DEFAULTS.device,
                 convert: Optional[ConvertOptions] = None, tensors: Tensors = "auto",
                 prefetch_bytes: int = _DEFAULTS.prefetch_bytes,
                 compression: str = _DEFAULTS.compression, ordered: bool = _DEFAULTS.ordered,
                 return_indices: bool = False,
                 hybrid: Optional[HybridOptions] = None,
                 fields: Optional[Sequence[str]] = None, targets: str = "list",
                 decoded_cache: Union[bool, str, None] = None) -> None:
        args = dict(locals())
        del args["self"]
        if targets not in TARGET_FORMS:
            raise ValueError(f"targets: expected one of {', '.join(TARGET_FORMS)}, got "
                             f"{targets!r}")
        self._targets = targets
        self._tensor_type = resolve_tensor_type(tensors)
        self._return_indices = return_indices
        self._fields = list(fields) if fields else None
        self._config = build_config(args)
        self._opened: Optional[_stoker.Loader] = None  # opened on first use

    @property
    def _loader(self) -> _stoker.Loader:
        if self._opened is None:
            self._opened = _stoker.Loader(self._config)
        return self._opened

    # --- iteration ---
    def batches(self) -> Iterator[Batch]:
        """The rest of the current epoch as stoker.Batch objects."""
        for raw in self._loader.epoch():
            yield Batch(raw, self._tensor_type)

    def __iter__(self) -> Iterator[Any]:
        """The rest of the current epoch as (images, labels) or, with return_indices,
        (images, labels, sample_indices); with fields, as a dict per batch (Batch.as_dict)."""
        for batch in self.batches():
            if self._fields is not None:
                named = batch.as_dict(self._fields, self._targets)
                if self._return_indices:
                    named["sample_indices"] = batch.sample_indices
                yield named
            elif self._return_indices:
                yield batch.images, batch.labels, batch.sample_indices
            else:
                yield batch.images, batch.labels

    def __len__(self) -> int:
        """Batches per epoch for this rank."""
        return self._loader.batches_per_epoch

    def next_batch(self) -> Batch:
        """The next stoker.Batch across epochs; stoker.EndOfJobError after the last one."""
        return Batch(self._loader.next(), self._tensor_type)

    def as_iterable_dataset(self) -> Any:
        """This loader as a torch.utils.data.IterableDataset (stoker.torch), for code built
        around DataLoader(dataset, batch_size=None). Needs torch."""
        from .torch import StokerIterableDataset
        return StokerIterableDataset(self)

    # --- what the job is ---
    @property
    def epochs(self) -> int:
        return self._loader.epochs

    @property
    def current_epoch(self) -> int:
        """The epoch the next batch belongs to (== epochs once the job is done)."""
        return self._loader.current_epoch

    @property
    def batches_per_epoch(self) -> int:
        return self._loader.batches_per_epoch

    @property
    def job_name(self) -> str:
        return self._loader.job_name

    @property
    def job_id(self) -> str:
        return self._loader.job_id

    @property
    def device(self) -> str:
        return self._loader.device

    @property
    def tensor_type(self) -> str:
        """"torch" or "numpy": what the iteration yields."""
        return self._tensor_type

    # --- checkpoints (torchdata StatefulDataLoader's contract) ---
    def state_dict(self) -> StateDict:
        """Where this rank stands, to save beside the model checkpoint (torch.save, pickle):
        {"resume_token": bytes}, covering exactly the batches yielded so far (a few dozen bytes
        in ordered mode)."""
        return {"resume_token": self._loader.resume_token()}

    def load_state_dict(self, state: Union[StateDict, Sequence[StateDict]]) -> None:
        """Continues from a checkpoint, in this process or a new one: no batch of the
        checkpointed epoch is lost or delivered twice. `state`: this rank's state_dict() (same
        world size), or the list of every old rank's state_dict() when the world size changed
        (the remaining batches are dealt over the new ranks; the default job_name differs with
        the world size, a given one must be new). Called before iterating, the job opens
        straight from the token(s); later, the loader is reopened from them."""
        states = state if isinstance(state, (list, tuple)) else [state]
        tokens: List[bytes] = []
        for s in states:
            if not isinstance(s, Mapping) or not isinstance(s.get("resume_token"), bytes):
                raise TypeError("load_state_dict: expected state_dict() output or a list of them")
            tokens.append(s["resume_token"])
        self.stop()
        self._opened = None
        self._config.resume_tokens = tokens

    # --- the rest ---
    def stats(self) -> Dict[str, Any]:
        """The loader's counters, every LoaderStats field (trainer_client/loader.h) by its name,
        plus data_wait_fraction; "workers" is a list of dicts, one per worker, with every
        WorkerReceiveStats field."""
        return self._loader.stats()

    def trace(self, seconds: int, path: Optional[str] = None, sample_one_in: int = 0) -> str:
        """Traces the job for `seconds` (1..the coordinator's --max-trace-seconds) and returns
        its batch timeline as Chrome Trace Event JSON, the same file `stoker-ctl trace` writes:
        the coordinator's events, every worker's stages and every rank's, in the coordinator's
        clock (docs/metrics.md, "Batch timeline"). Keep consuming meanwhile (another thread, or
        call it from a callback thread): only batches moving in the window are traced. With
        `path`, also writes the JSON there (open it in ui.perfetto.dev or chrome://tracing).
        `sample_one_in`: trace 1 batch in N (0: every batch). Blocks for about seconds + 5.
        Raises stoker.StokerError for the coordinator's refusals (bad seconds, unknown job)."""
        text = self._loader.trace(seconds, sample_one_in)
        if path is not None:
            with open(path, "w") as out:
                out.write(text)
        return text

    def stop(self) -> None:
        """Ends the streams; batches and tensors already returned stay valid. Idempotent."""
        if self._opened is not None:
            self._opened.stop()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.stop()
        return False
