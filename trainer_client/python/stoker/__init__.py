"""Stoker's trainer client for Python: stoker.Loader yields a job's batches as torch tensors or
NumPy arrays (zero copy; batches are DLPack producers for any other consumer);
stoker.from_torchvision translates a torchvision transform into a Stoker pipeline.

Needs NumPy only: torch is imported when torch tensors are asked for (Loader(tensors="torch"),
or "auto" with torch installed), by stoker.torch (the IterableDataset adapter) and by the
torchvision translation. See docs/trainer_client.md ("Python") and examples/pytorch/.
"""

from . import _stoker
from ._stoker import HAVE_CUDA
from .batch import Batch
from .errors import (AlreadyExistsError, CancelledError, DataLossError, EndOfJobError,
                     FailedPreconditionError, InvalidArgumentError, NotFoundError,
                     PermissionDeniedError, ResourceExhaustedError, StokerError,
                     UnavailableError)
from .loader import Loader
from .local_cluster import LocalCluster
from .options import ConvertOptions, HybridOptions, TlsOptions
from .targets import detection_targets
from .tensors import DlpackTensor
from .torchvision_translate import Pipeline, from_torchvision, run_pipeline, torchvision_v2


def explain_pipeline(pipeline, input="375x500x3", layout="hwc", dtype="auto", runs=15):
    """stoker-ctl pipeline explain's table: each op's output shape and dtype and its cost per
    image measured on this machine. `pipeline`: text, or a stoker.Pipeline (from_torchvision)."""
    return _stoker.explain_pipeline(getattr(pipeline, "text", pipeline), input, layout, dtype,
                                    runs)


__all__ = ["Loader", "Batch", "DlpackTensor", "TlsOptions", "ConvertOptions", "HybridOptions",
           "LocalCluster", "Pipeline", "from_torchvision", "run_pipeline", "torchvision_v2",
           "explain_pipeline", "detection_targets",
           "StokerError", "InvalidArgumentError", "UnavailableError", "NotFoundError",
           "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
           "FailedPreconditionError", "EndOfJobError", "CancelledError", "DataLossError",
           "HAVE_CUDA"]
