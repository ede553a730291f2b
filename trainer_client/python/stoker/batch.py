"""stoker.Batch: one received batch, its tensors sharing the batch's memory (DLPack, no copy)."""

from functools import cached_property
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _stoker
from .targets import TARGET_FIELDS, pad_targets, target_arrays
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
    def field(self, name: str) -> List[Any]:
        """Each sample's value of the field `name`, in batch order: str for "text" and "json"
        (decoded as UTF-8); for a typed target ("boxes", "box_labels", "masks", "keypoints";
        stoker.targets) a torch tensor or NumPy array per sample, [N_i, ...] ([H, W] for
        "semantic_mask"); bytes for any other field. KeyError when the job did not name it."""
        names = self.raw.field_names
        if name not in names:
            raise KeyError(f"field {name!r}: this batch carries {names}")
        if name in TARGET_FIELDS:
            return [self._tensor(a) for a in target_arrays(self.raw, name)]
        values = self.raw.field_values(names.index(name))
        if name not in _TEXT_FIELDS:
            return values
        indices = self.raw.sample_indices  # A copy: taken once.
        return [_decode_utf8(name, indices[i], value) for i, value in enumerate(values)]

    def padded_targets(self, name: str) -> Tuple[Any, Any]:
        """The typed target `name` of every sample as one zero-padded tensor [B, max N_i, ...]
        and the counts N_i (int64 [B])."""
        if name not in TARGET_FIELDS or name not in self.raw.field_names:
            raise KeyError(f"typed target {name!r}: this batch carries {self.raw.field_names}")
        padded, counts = pad_targets(name, target_arrays(self.raw, name))
        return self._tensor(padded), self._tensor(counts)

    def as_dict(self, names: Sequence[str], targets: str = "list") -> Dict[str, Any]:
        """{name: value} for `names`: "image" the images, "label" the labels, any other name
        field(name); with targets="padded", each typed target padded_targets(name), its counts
        under "<name>_count"."""
        special = {"image": lambda: self.images, "label": lambda: self.labels}
        named: Dict[str, Any] = {}
        for name in names:
            if name in special:
                named[name] = special[name]()
            elif targets == "padded" and name in TARGET_FIELDS:
                named[name], named[f"{name}_count"] = self.padded_targets(name)
            else:
                named[name] = self.field(name)
        return named

    def _tensor(self, array: Any) -> Any:
        """A NumPy array of this batch's as the loader's tensor type (no copy)."""
        if self.tensor_type == "torch":
            import torch
            return torch.from_numpy(array)
        return array

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
