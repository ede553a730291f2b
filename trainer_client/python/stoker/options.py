"""stoker.Loader's grouped options: TLS, the trainer-side conversion, and hybrid mode.

    loader = stoker.Loader(..., tls=stoker.TlsOptions(cert_file="trainer.pem",
                                                     key_file="trainer.key", ca_file="ca.pem"))
"""

from dataclasses import dataclass
from typing import Optional, Sequence

from . import _stoker

_DEFAULTS = _stoker.LoaderConfig()  # The C++ defaults (python_loader_config.h), defined once.


@dataclass(frozen=True)
class TlsOptions:
    """How the loader authenticates to the coordinator and the workers (docs/security.md).
    One of: cert_file + key_file + ca_file (mutual TLS); ca_file + bearer_token_file (server-
    authenticated TLS with a bearer token); insecure=True (plaintext, no authentication: only
    when asked for explicitly). The fields are those of the C++ TlsConfig, and errors name them
    the same way ("tls.cert_file: ...")."""

    cert_file: str = ""
    """This trainer's certificate (PEM, role trainer)."""
    key_file: str = ""
    """Its private key (PEM)."""
    ca_file: str = ""
    """The CA bundle the coordinator's and workers' certificates are checked against (PEM)."""
    bearer_token_file: str = ""
    """A file with this trainer's bearer token ("trainer:<token>"), sent over TLS instead of (or
    beside) a client certificate."""
    insecure: bool = False
    """Plaintext without authentication."""


@dataclass(frozen=True)
class ConvertOptions:
    """Conversion of uint8 HWC batches to float32 NCHW, (x / 255 - mean) / std, in this process
    (device "cpu") or on the GPU (device "cuda[:N]", where it is always on and these options are
    optional). Needs layout "hwc" and a uint8 pipeline output."""

    mean: Optional[Sequence[float]] = None
    """Per-channel mean of the normalization (with std, or neither: no normalization)."""
    std: Optional[Sequence[float]] = None
    """Per-channel standard deviation."""
    resident_batches: int = _DEFAULTS.resident_batches
    """Converted batches alive at once; holding more blocks the next one."""


@dataclass(frozen=True)
class HybridOptions:
    """Hybrid mode: producer threads in this process, private to this loader, besides the remote
    workers; a job can run with no remote worker at all."""

    threads: int = 1
    """Producer threads in this process."""
    cert_file: str = ""
    """Under TLS: the in-process producer's certificate (role worker); it trusts tls.ca_file."""
    key_file: str = ""
    """Its private key."""


__all__ = ["TlsOptions", "ConvertOptions", "HybridOptions"]
