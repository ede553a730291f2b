"""Typed targets of detection and segmentation jobs (Loader(fields=["image", "boxes",
"box_labels", "masks"])): each sample's boxes, box labels, instance masks and keypoints, moved
with the image by the job's augmentations on the workers, in pixels of the output image
(docs/decisions/0068-typed-targets-on-the-wire.md).

    loader = stoker.Loader(..., fields=["image", "boxes", "box_labels", "masks"])
    for batch in loader:
        images, targets = stoker.detection_targets(batch)
        loss_dict = model(images, targets)   # torchvision's detection models

Per sample, as torch tensors (NumPy arrays with tensors="numpy"):
    "boxes"       float32 [N, 4], XYXY pixels
    "box_labels"  int64 [N]
    "masks"       uint8 [N, H, W], 0 or 1 (H x W the batch's images)
    "keypoints"   float32 [N, K, 3], (x, y, visibility)
    "semantic_mask"  uint8 [H, W], the class ids of a label map (a WebDataset's .seg.png, the
                  palette index of a palette PNG), 255 where the augmentations brought in
                  pixels from outside the image (pad, affine, rotation, perspective): "ignore",
                  as CrossEntropyLoss(ignore_index=255) in torchvision's segmentation references
The values lie in the received payload at any alignment: each is copied once (np.frombuffer
reads unaligned bytes), so a sample's targets are ordinary, writable tensors.
"""

from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

TARGET_FIELDS = ("boxes", "box_labels", "masks", "keypoints", "semantic_mask")
# The per-instance ones, which detection_targets hands to torchvision's detection models.
_DETECTION_FIELDS = TARGET_FIELDS[:4]
# How the Loader's dict carries them (Loader(targets=...)).
TARGET_FORMS = ("list", "padded")

_KEYPOINTS_PREFIX = 4  # u32 keypoints per instance, before the float32 values


def _sample_array(name: str, value: bytes, height: int, width: int) -> np.ndarray:
    """One sample's wire value of typed field `name` as a NumPy array (a copy)."""
    if name == "boxes":
        return np.frombuffer(value, dtype="<f4").reshape(-1, 4).copy()
    if name == "box_labels":
        return np.frombuffer(value, dtype="<i8").copy()
    if name == "masks":
        return np.frombuffer(value, dtype=np.uint8).reshape(-1, height, width).copy()
    if name == "semantic_mask":
        return np.frombuffer(value, dtype=np.uint8).reshape(height, width).copy()
    if not value:
        return np.zeros((0, 0, 3), dtype=np.float32)
    per_instance = int(np.frombuffer(value, dtype="<u4", count=1)[0])
    points = np.frombuffer(value, dtype="<f4", offset=_KEYPOINTS_PREFIX)
    return points.reshape(-1, per_instance, 3).copy()


def target_arrays(raw: Any, name: str) -> List[np.ndarray]:
    """Each sample's `name` target of `raw` (a stoker._stoker.Batch) as NumPy arrays. The
    client checked the values on receipt (whole instances, wire/target_check.h)."""
    shape = raw.shape
    height, width = (shape[2], shape[3]) if raw.layout == "chw" else (shape[1], shape[2])
    values = raw.field_values(raw.field_names.index(name))
    return [_sample_array(name, value, height, width) for value in values]


def pad_targets(name: str, arrays: Sequence[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """Per-sample arrays [N_i, ...] as one zero-padded array [B, max N_i, ...] and the counts
    N_i (int64 [B]). Keypoints of samples without instances take the others' K. Semantic masks,
    one [H, W] a sample, are stacked [B, H, W], their counts all 1."""
    if name == "semantic_mask":
        return np.stack(arrays), np.ones(len(arrays), dtype=np.int64)
    counts = np.array([len(a) for a in arrays], dtype=np.int64)
    trailing = max((a.shape[1:] for a in arrays if len(a)), default=arrays[0].shape[1:])
    padded = np.zeros((len(arrays), int(counts.max(initial=0))) + tuple(trailing),
                      dtype=arrays[0].dtype)
    for i, a in enumerate(arrays):
        padded[i, :len(a)] = a
    return padded, counts


def detection_targets(batch: Dict[str, Any]) -> Tuple[Any, List[Dict[str, Any]]]:
    """(images, targets) as torchvision's detection references' train loop consumes them, from
    a dict the Loader yields with typed fields: images is batch["image"] as yielded (a [B, C, H,
    W] tensor iterates as the list of images the models take: end the pipeline with to_float and
    a chw layout), targets one dict per sample with "boxes", "labels" (from "box_labels"),
    "masks" and "keypoints", those the job named. Works with targets="list" and "padded"."""
    renamed = {"box_labels": "labels"}
    present = [name for name in _DETECTION_FIELDS if name in batch]
    if not present:
        raise KeyError(f"detection_targets: the batch has none of {_DETECTION_FIELDS} "
                       f"(name them in Loader(fields=...))")
    size = len(batch["image"])
    targets: List[Dict[str, Any]] = [{} for _ in range(size)]
    for name in present:
        values = batch[name]
        counts = batch.get(f"{name}_count")
        for i in range(size):
            value = values[i] if counts is None else values[i][:int(counts[i])]
            targets[i][renamed.get(name, name)] = value
    return batch["image"], targets
