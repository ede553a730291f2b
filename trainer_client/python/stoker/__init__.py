"""Stoker's trainer client for Python: stoker.Loader yields a job's batches as torch tensors.

See docs/trainer_client.md ("Python") and examples/pytorch/train_tiny.py.
"""

from ._stoker import (HAVE_CUDA, CancelledError, EndOfJobError, FailedPreconditionError,
                      InvalidArgumentError, StokerError, UnavailableError)
from .loader import Batch, Loader
from .local_cluster import LocalCluster

__all__ = ["Loader", "Batch", "LocalCluster", "StokerError", "InvalidArgumentError",
           "UnavailableError", "FailedPreconditionError", "EndOfJobError", "CancelledError",
           "HAVE_CUDA"]
