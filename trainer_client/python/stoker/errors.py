"""Stoker's exceptions: every failing call raises a StokerError carrying the status code (the
gRPC / absl::Status code, as its name and its number) and the message.

    try:
        loader = stoker.Loader(...)
        len(loader)                      # opens the job on the coordinator
    except stoker.InvalidArgumentError as error:
        print(error.code, error.code_number, error.message)   # INVALID_ARGUMENT 3 world_size...

Subclasses by code (also subclasses of the matching builtin, so `except ValueError` keeps
working); codes without a subclass raise StokerError itself.
"""

from typing import Dict, Optional, Tuple, Type

# absl::StatusCode / grpc::StatusCode, by number.
CODE_NAMES: Tuple[str, ...] = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED")


class StokerError(RuntimeError):
    """A Stoker call failed. `code`: the status code's name ("INVALID_ARGUMENT"), `code_number`:
    its number (3, the same in gRPC and absl), `message`: the message; str(error) is
    "CODE: message"."""

    default_code = "UNKNOWN"

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        self.code: str = code or self.default_code
        self.code_number: int = CODE_NAMES.index(self.code)
        self.message: str = message
        super().__init__(f"{self.code}: {message}")

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __reduce__(self):
        return (type(self), (self.message, self.code))


class InvalidArgumentError(StokerError, ValueError):
    """INVALID_ARGUMENT: a bad argument or request, named first in the message."""
    default_code = "INVALID_ARGUMENT"


class UnavailableError(StokerError, ConnectionError):
    """UNAVAILABLE / DEADLINE_EXCEEDED: the coordinator or a worker is unreachable."""
    default_code = "UNAVAILABLE"


class NotFoundError(StokerError, LookupError):
    """NOT_FOUND: an unknown job, worker or file."""
    default_code = "NOT_FOUND"


class AlreadyExistsError(StokerError):
    """ALREADY_EXISTS: a job of that name exists with another spec (pass a new job_name)."""
    default_code = "ALREADY_EXISTS"


class PermissionDeniedError(StokerError, PermissionError):
    """PERMISSION_DENIED / UNAUTHENTICATED: the peer refused this identity (docs/security.md)."""
    default_code = "PERMISSION_DENIED"


class ResourceExhaustedError(StokerError):
    """RESOURCE_EXHAUSTED: a server limit was reached (the message names its flag)."""
    default_code = "RESOURCE_EXHAUSTED"


class FailedPreconditionError(StokerError):
    """FAILED_PRECONDITION: retrying will not help (e.g. no CUDA device)."""
    default_code = "FAILED_PRECONDITION"


class EndOfJobError(StokerError):
    """OUT_OF_RANGE: every batch of every epoch was delivered."""
    default_code = "OUT_OF_RANGE"


class CancelledError(StokerError):
    """CANCELLED: the loader was stopped."""
    default_code = "CANCELLED"


class DataLossError(StokerError):
    """DATA_LOSS: more unreadable samples than max_bad_sample_fraction allows."""
    default_code = "DATA_LOSS"


_BY_CODE: Dict[str, Type[StokerError]] = {
    "INVALID_ARGUMENT": InvalidArgumentError,
    "UNAVAILABLE": UnavailableError,
    "DEADLINE_EXCEEDED": UnavailableError,
    "NOT_FOUND": NotFoundError,
    "ALREADY_EXISTS": AlreadyExistsError,
    "PERMISSION_DENIED": PermissionDeniedError,
    "UNAUTHENTICATED": PermissionDeniedError,
    "RESOURCE_EXHAUSTED": ResourceExhaustedError,
    "FAILED_PRECONDITION": FailedPreconditionError,
    "OUT_OF_RANGE": EndOfJobError,
    "CANCELLED": CancelledError,
    "DATA_LOSS": DataLossError,
}


def error_from_status(code_number: int, message: str) -> StokerError:
    """The exception for a failed status (the C++ module raises what this returns)."""
    code = CODE_NAMES[code_number] if 0 < code_number < len(CODE_NAMES) else "UNKNOWN"
    return _BY_CODE.get(code, StokerError)(message, code)


__all__ = ["StokerError"] + sorted({cls.__name__ for cls in _BY_CODE.values()})
