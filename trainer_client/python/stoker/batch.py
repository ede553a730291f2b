"""stoker.Batch: one received batch, its tensors sharing the batch's memory (DLPack, no copy)."""

from functools import cached_property
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _stoker
from .tensors import DlpackTensor, from_dlpack, from_list


# Fields delivered as str (the rest as bytes).
_TEXT_FIELDS = ("text", "json")


def _decode_utf8(name: str, sample: int, value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UnicodeDecodeError(e.encoding, e.object, e.start, e.end,
                                 f"field {name!r} of sample {sample}: {e.reason}") from None


class Batch:
    """One received batch. `images`, `labels` and `hard_labels` are torch tensors or NumPy
    arrays (the Loader's `tensors` argument) over the batch's own memory; `images_dlpack`,
    `labels_dlpack` are the same memory as DLPack producers for any other consumer. The batch
    itself is a DLPack producer of its images: `np.from_dlpack(batch)`,
    `torch.from_dlpack(batch)`.

    Every tensor handed out keeps the received message alive on its own: it stays valid after
    the batch object, later batches and the loader itself are gone."""

    def __init__(self, raw: _stoker.Batch, tensor_type: str) -> None:
        self.raw = raw  # stoker._stoker.Batch: shape, dtype, layout, epoch, _payload_address ...
        self.tensor_type = tensor_type

    # --- DLPack producers ---
    @cached_property
    def images_dlpack(self) -> DlpackTensor:
        """The images: dtype and layout as received ([N, C, H, W] or [N, H, W, C]), or float32
        [N, C, H, W] when the loader converts."""
        raw = self.raw
        if raw.converted:
            n, h, w, c = raw.shape
            shape, dtype = (n, c, h, w), "float32"
        else:
            shape, dtype = tuple(raw.shape), raw.dtype
        return DlpackTensor(raw.images_dlpack, raw.images_device, shape, dtype)

    @cached_property
    def labels_dlpack(self) -> DlpackTensor:
        """int64 [N] labels; with MixUp/CutMix the float32 [N, num_classes] soft labels."""
        raw = self.raw
        if raw.num_classes > 0:
            return DlpackTensor(raw.soft_labels_dlpack, (1, 0),
                                (raw.num_samples, raw.num_classes), "float32")
        return self.hard_labels_dlpack

    @cached_property
    def hard_labels_dlpack(self) -> DlpackTensor:
        """int64 [N]: each sample's own label (before MixUp/CutMix)."""
        return DlpackTensor(self.raw.labels_dlpack, (1, 0), (self.raw.num_samples,), "int64")

    def __dlpack__(self, *, stream: Optional[int] = None,
                   max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None,
                   copy: Optional[bool] = None) -> Any:
        """The images' DLPack capsule (see DlpackTensor.__dlpack__)."""
        return self.images_dlpack.__dlpack__(stream=stream, max_version=max_version,
                                             dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.images_dlpack.__dlpack_device__()

    # --- torch tensors or NumPy arrays ---
    @cached_property
    def images(self) -> Any:
        return from_dlpack(self.images_dlpack, self.tensor_type)

    @cached_property
    def labels(self) -> Any:
        return from_dlpack(self.labels_dlpack, self.tensor_type)

    @cached_property
    def hard_labels(self) -> Any:
        return from_dlpack(self.hard_labels_dlpack, self.tensor_type)

    # --- sample fields (the Loader's fields=) ---
    def field(self, name: str) -> List[Union[str, bytes]]:
        """Each sample's value of the pass-through field `name`, in batch order: str for
        "text" and "json" (decoded as UTF-8), bytes for any other field. KeyError when the job
        did not name it."""
        names = self.raw.field_names
        if name not in names:
            raise KeyError(f"field {name!r}: this batch carries {names}")
        values = self.raw.field_values(names.index(name))
        if name not in _TEXT_FIELDS:
            return values
        indices = self.raw.sample_indices  # A copy: taken once.
        return [_decode_utf8(name, indices[i], value) for i, value in enumerate(values)]

    def as_dict(self, names: Sequence[str]) -> Dict[str, Any]:
        """{name: value} for `names`: "image" the images, "label" the labels, any other name
        field(name)."""
        special = {"image": lambda: self.images, "label": lambda: self.labels}
        return {name: special[name]() if name in special else self.field(name) for name in names}

    @property
    def sample_indices(self) -> Any:
        """Dataset index of each sample, int64 [N] (a copy)."""
        return from_list(self.raw.sample_indices, self.tensor_type)

    @property
    def epoch(self) -> int:
        return self.raw.epoch

    @property
    def batch_index(self) -> int:
        return self.raw.batch_index

    def __repr__(self) -> str:
        return (f"stoker.Batch(epoch={self.epoch}, batch_index={self.batch_index}, "
                f"images={self.images_dlpack!r})")
