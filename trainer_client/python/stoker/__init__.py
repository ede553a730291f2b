"""Stoker's trainer client for Python: stoker.Loader yields a job's batches as torch tensors;
stoker.from_torchvision translates a torchvision transform into a Stoker pipeline.

See docs/trainer_client.md ("Python") and examples/pytorch/train_tiny.py.
"""

from . import _stoker
from ._stoker import (HAVE_CUDA, CancelledError, EndOfJobError, FailedPreconditionError,
                      InvalidArgumentError, StokerError, UnavailableError)
from .loader import Batch, Loader
from .local_cluster import LocalCluster
from .torchvision_translate import Pipeline, from_torchvision, run_pipeline


def explain_pipeline(pipeline, input="375x500x3", layout="hwc", dtype="auto", runs=15):
    """stoker-ctl pipeline explain's table: each op's output shape and dtype and its cost per
    image measured on this machine. `pipeline`: text, or a stoker.Pipeline (from_torchvision)."""
    return _stoker.explain_pipeline(getattr(pipeline, "text", pipeline), input, layout, dtype,
                                    runs)

__all__ = ["Loader", "Batch", "LocalCluster", "Pipeline", "from_torchvision", "run_pipeline", "explain_pipeline",
           "StokerError", "InvalidArgumentError", "UnavailableError", "FailedPreconditionError", "EndOfJobError", "CancelledError",
           "HAVE_CUDA"]
