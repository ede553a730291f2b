"""Stoker's trainer client for Python: stoker.Loader yields a job's batches as torch tensors;
stoker.from_torchvision translates a torchvision transform into a Stoker pipeline.

See docs/trainer_client.md ("Python") and examples/pytorch/train_tiny.py.
"""

from ._stoker import (HAVE_CUDA, CancelledError, EndOfJobError, FailedPreconditionError,
                      InvalidArgumentError, StokerError, UnavailableError)
from .loader import Batch, Loader
from .local_cluster import LocalCluster
from .torchvision_translate import Pipeline, from_torchvision, run_pipeline

__all__ = ["Loader", "Batch", "LocalCluster", "Pipeline", "from_torchvision", "run_pipeline",
           "StokerError", "InvalidArgumentError", "UnavailableError", "FailedPreconditionError", "EndOfJobError", "CancelledError",
           "HAVE_CUDA"]
