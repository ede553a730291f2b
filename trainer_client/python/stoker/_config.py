"""The Loader's arguments as the C++ module's LoaderConfig (python_loader_config.h)."""

import os
import warnings
from typing import Any, Dict, Optional

from . import _stoker
from .options import ConvertOptions, HybridOptions, TlsOptions
from .torchvision_translate import from_torchvision


def build_config(args: Dict[str, Any]) -> _stoker.LoaderConfig:
    """`args`: the Loader's arguments by name. Raises what a bad argument raises (TypeError,
    ValueError, stoker.InvalidArgumentError), before anything reaches the coordinator."""
    config = _stoker.LoaderConfig()
    config.coordinator = args["coordinator"]
    dataset = args["dataset"]
    for key, value in _dataset_fields(dataset).items():
        setattr(config, key, value)
    config.pipeline = ", ".join(
        part for part in (_pipeline_text(args["pipeline"], args["transform"],
                                         isinstance(dataset, (str, list, tuple))),
                          _batch_mix_text("mixup", args["mixup"]),
                          _batch_mix_text("cutmix", args["cutmix"]))
        if part)
    convert = _typed("convert", args["convert"], ConvertOptions)
    converts = convert is not None or args["device"] != "cpu"
    convert = convert or ConvertOptions()
    layout = args["layout"]
    config.layout = layout if layout is not None else ("hwc" if converts else "chw")
    config.to_float = converts and args["device"] == "cpu"
    config.mean = list(convert.mean or [])
    config.std = list(convert.std or [])
    config.resident_batches = convert.resident_batches
    for name in ("dtype", "batch_size", "rank", "world_size", "epochs", "seed", "shuffle",
                 "shuffle_block", "shuffle_window_shards", "sweep_seed", "drop_last",
                 "max_bad_sample_fraction", "prefetch_bytes", "device",
                 "compression", "ordered"):
        setattr(config, name, args[name])
    config.tail = _tail(args["tail"], args["tail_on_client"])
    config.job_name = args["job_name"] or ""
    config.fields = _fields(args["fields"])
    config.decoded_cache = _decoded_cache(args["decoded_cache"])
    config.run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
    _set_tls(config, _typed("tls", args["tls"], TlsOptions) or TlsOptions())
    _set_hybrid(config, _typed("hybrid", args["hybrid"], HybridOptions))
    config.validate()  # bad arguments and unusable devices raise here
    return config


def _decoded_cache(value: Any) -> str:
    """JobSpecArgs.decoded_cache from Loader's decoded_cache= (True, False, None or a name)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        return value  # JobSpecArgs names the argument when the name is unknown
    raise TypeError(
        f"decoded_cache: expected a bool, 'auto', 'on', 'off' or 'always', got {value!r}")


def _fields(fields: Any) -> list:
    """The fields= argument as a list of names ([] for None); OpenJob checks the names."""
    if fields is None:
        return []
    if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
        raise TypeError("fields: expected a list of str, e.g. [\"image\", \"text\"]")
    return list(fields)


def _tail(tail: str, tail_on_client: Optional[bool]) -> str:
    """The placement asked for: `tail`, or "client" from the deprecated tail_on_client=True."""
    if not tail_on_client:
        return tail
    warnings.warn('tail_on_client=True is deprecated: pass tail="client"', DeprecationWarning,
                  stacklevel=4)
    if tail not in ("auto", "client"):
        raise ValueError(f'tail_on_client: True asks for tail="client", but tail="{tail}"')
    return "client"


def _typed(name: str, value: Any, cls: type) -> Any:
    if value is not None and not isinstance(value, cls):
        raise TypeError(f"{name}: expected stoker.{cls.__name__} or None, "
                        f"got {type(value).__name__}")
    return value


def _set_tls(config: _stoker.LoaderConfig, tls: TlsOptions) -> None:
    config.tls_cert = tls.cert_file
    config.tls_key = tls.key_file
    config.tls_ca = tls.ca_file
    config.bearer_token_file = tls.bearer_token_file
    config.insecure = tls.insecure


def _set_hybrid(config: _stoker.LoaderConfig, hybrid: Optional[HybridOptions]) -> None:
    if hybrid is None:
        return
    if hybrid.threads <= 0:
        raise ValueError(f"hybrid.threads: must be > 0, got {hybrid.threads}")
    config.hybrid_threads = hybrid.threads
    config.hybrid_tls_cert = hybrid.cert_file
    config.hybrid_tls_key = hybrid.key_file


def _dataset_fields(dataset):
    if isinstance(dataset, bool):
        raise TypeError("dataset: expected int, dict, str or a list of str")
    if isinstance(dataset, int):
        return {"num_samples": dataset}
    if isinstance(dataset, str):
        return {"manifest": dataset}
    if isinstance(dataset, (list, tuple)):
        if not dataset or not all(isinstance(path, str) for path in dataset):
            raise TypeError("dataset: a list of shard paths must be a non-empty list of str")
        return {"paths": list(dataset)}
    if isinstance(dataset, dict):
        allowed = {"num_samples", "height", "width", "channels", "num_classes"}
        unknown = set(dataset) - allowed
        if unknown:
            raise ValueError(f"dataset: unknown keys {sorted(unknown)}; known: {sorted(allowed)}")
        return dict(dataset)
    raise TypeError(f"dataset: expected int, dict, str or a list of str, "
                    f"got {type(dataset).__name__}")


def _pipeline_text(pipeline, transform, encoded):
    if transform is not None:
        if pipeline is not None:
            raise ValueError("pipeline, transform: give one of them, not both")
        return from_torchvision(transform, decode=encoded).text
    if pipeline is None:
        return "to_float"
    if isinstance(pipeline, (list, tuple)):
        return ", ".join(pipeline)
    return str(pipeline)


def _batch_mix_text(name, spec):
    """The text form of the Loader's mixup= / cutmix= argument (None: "")."""
    if spec is None:
        return ""
    if isinstance(spec, dict):
        unknown = set(spec) - {"alpha", "num_classes"}
        if unknown:
            raise ValueError(f"{name}: unknown keys {sorted(unknown)}; known: alpha, num_classes")
        alpha, num_classes = spec.get("alpha", 1.0), spec.get("num_classes")
    elif hasattr(spec, "alpha") and hasattr(spec, "num_classes"):
        alpha, num_classes = spec.alpha, spec.num_classes
    else:
        raise TypeError(f"{name}: expected a dict {{'alpha', 'num_classes'}} or an object with "
                        f".alpha and .num_classes (torchvision.transforms.v2.{_class_name(name)}), "
                        f"got {type(spec).__name__}")
    if num_classes is None:
        raise ValueError(f"{name}: num_classes is required")
    return f"{name}(alpha={float(alpha)!r}, num_classes={int(num_classes)})"


def _class_name(name):
    return {"mixup": "MixUp", "cutmix": "CutMix"}[name]
