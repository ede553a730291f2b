"""A batch's tensors as DLPack producers, and their conversion to torch tensors or NumPy arrays,
both without a copy. torch is imported only when torch tensors are asked for.

    t = batch.images_dlpack               # a stoker.DlpackTensor
    np.from_dlpack(t); torch.from_dlpack(t); jax.dlpack.from_dlpack(t)   # all share its memory

Each __dlpack__() call makes a new capsule whose DLManagedTensor holds a reference to the
received batch (or the converted tensor): the memory stays valid while any consumer holds it,
however far the loader has moved on, and is freed when the last consumer frees it.
"""

import enum
from typing import Any, Callable, Optional, Tuple

TENSOR_TYPES = ("auto", "torch", "numpy")


class DLDeviceType(enum.IntEnum):
    """DLPack's device types that Stoker hands out."""
    CPU = 1
    CUDA = 2


class DlpackTensor:
    """One tensor of a batch as a DLPack producer (the `__dlpack__` protocol of the Python array
    API): any DLPack consumer takes it without a copy. `shape` and `dtype` (a str: "uint8",
    "float32", "float16", "bfloat16", "int64") describe it."""

    __slots__ = ("_export", "_device", "shape", "dtype")

    def __init__(self, export: Callable[[], Any], device: Tuple[int, int],
                 shape: Tuple[int, ...], dtype: str) -> None:
        self._export = export
        self._device = (int(device[0]), int(device[1]))
        self.shape = tuple(shape)
        self.dtype = dtype

    def __dlpack__(self, *, stream: Optional[int] = None,
                   max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None,
                   copy: Optional[bool] = None) -> Any:
        """A new "dltensor" capsule over the tensor's memory. `stream` is accepted and ignored:
        a CUDA tensor is complete before it is handed out. A legacy (unversioned) capsule is
        returned whatever `max_version` says, as the protocol allows."""
        if copy:
            raise BufferError("DlpackTensor: copy=True is not supported (Stoker exports its "
                              "memory without a copy)")
        if dl_device is not None and tuple(dl_device) != self._device:
            raise BufferError(f"DlpackTensor: the tensor is on device {self._device}, "
                              f"not {tuple(dl_device)}")
        return self._export()

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(DLDeviceType, device index): (1, 0) for host memory, (2, N) for cuda:N."""
        return self._device

    def __repr__(self) -> str:
        return f"DlpackTensor(shape={self.shape}, dtype={self.dtype}, device={self._device})"


def resolve_tensor_type(tensors: str) -> str:
    """"torch" or "numpy" for the Loader's `tensors` argument ("auto": torch when importable)."""
    if tensors not in TENSOR_TYPES:
        raise ValueError(f"tensors: expected one of {', '.join(TENSOR_TYPES)}, got {tensors!r}")
    if tensors == "numpy":
        return tensors
    try:
        import torch  # noqa: F401
    except ImportError:
        if tensors == "torch":
            raise ImportError("tensors='torch': torch is not importable here; use "
                              "tensors='numpy' or a DLPack consumer of Batch") from None
        return "numpy"
    return "torch"


def from_dlpack(tensor: DlpackTensor, tensor_type: str) -> Any:
    """`tensor` as a torch tensor or a NumPy array sharing its memory."""
    if tensor_type == "torch":
        import torch
        return torch.from_dlpack(tensor)
    import numpy
    return numpy.from_dlpack(tensor)


def from_list(values: list, tensor_type: str) -> Any:
    """A small int64 vector (sample indices) as a new torch tensor or NumPy array."""
    if tensor_type == "torch":
        import torch
        return torch.tensor(values, dtype=torch.int64)
    import numpy
    return numpy.asarray(values, dtype=numpy.int64)
