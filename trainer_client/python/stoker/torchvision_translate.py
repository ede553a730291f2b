"""stoker.from_torchvision: a torchvision.transforms pipeline (v1 classes, or v2 classes of the
same name) as a Stoker pipeline, op by op, so that the workers run what the training script ran.

    train = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                       T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    pipeline = stoker.from_torchvision(train)     # stoker.Pipeline
    print(pipeline.describe())                     # each transform and the op it became
    loader = stoker.Loader(..., transform=train)   # the same, done by the Loader

The input is what torchvision's transform gets from a PIL loader: an RGB (or gray) uint8 image;
with decode=True the pipeline starts by decoding the sample (Stoker's decode gives the pixels
PIL's Image.open(...).convert("RGB") gives). A transform Stoker cannot run is a ValueError that
names it, its position in the Compose, and the closest supported transform; nothing is dropped.
Transforms that are identities for Stoker (PILToTensor, ToImage: Stoker images are tensors
already) appear in describe() with no op. RandomApply, RandomChoice and RandomOrder become the
combinators (random_apply(ops=[...]), ...); the policies (RandAugment, TrivialAugmentWide,
AutoAugment(IMAGENET), AugMix) take uint8, as torchvision's. An object holding a Compose in
`.transforms` (torchvision's classification presets) is opened like a Compose. Random
transforms draw from Stoker's per-sample RNG: the same distributions as torchvision, not the
same draws as torch's generator. The detection transforms RandomZoomOut, RandomIoUCrop and
SanitizeBoundingBoxes (v2's, or the detection references' own of the same names where
torchvision has no v2) become zoom_out, random_iou_crop and sanitize_boxes, for a Loader whose
samples carry boxes; stoker.torchvision_v2() returns torchvision.transforms.v2 or says which
torchvision is installed and what it lacks.

torch is imported only when a transform is translated or run_pipeline is called.
"""

import difflib
import numbers

from ._op_schema import OpTextError, Raw, op_text as _op

# A translation step: the transform, the ops it became (maybe none), and whether the image is
# float32 afterwards. Ops are written with _op (stoker/_op_schema.py), which checks the op and
# argument names and the values' ranges against the op registry, so a transform with a value
# Stoker refuses is named here rather than failing later on the workers.


class Pipeline:
    """A Stoker pipeline made from a torchvision transform: `text` (the text syntax) and, per
    source transform, the ops it became."""

    def __init__(self, steps, decode):
        self.steps = steps  # [(position, transform repr, [op text, ...])]
        self.decode = decode

    @property
    def ops(self):
        return (["decode"] if self.decode else []) + [op for _, _, ops in self.steps for op in ops]

    @property
    def text(self):
        return ", ".join(self.ops)

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"stoker.Pipeline({self.text!r})"

    def describe(self):
        """One line per torchvision transform: its position, itself, and the Stoker ops."""
        lines = ["decode                          <- (the sample's bytes, as PIL would)"] \
            if self.decode else []
        for position, source, ops in self.steps:
            lines.append(f"[{position}] {source}\n      -> {', '.join(ops) or '(no op)'}")
        return "\n".join(lines)


def _hw(size, what):
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    size = list(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) == 2:
        return int(size[0]), int(size[1])
    raise _Unsupported(f"{what} must be an int or (height, width), got {size!r}")


class _Unsupported(Exception):
    """A supported transform with arguments Stoker cannot honour (the message says which)."""


def _interpolation_name(mode):
    return getattr(mode, "value", str(mode)).lower()


def _require_bilinear(t):
    mode = getattr(t, "interpolation", None)
    if mode is not None and _interpolation_name(mode) != "bilinear":
        raise _Unsupported(f"interpolation={_interpolation_name(mode)}: Stoker resamples bilinear")


def _resize_interpolation(t):
    # PIL images (what the transform saw) are always resized with PIL's antialiased bilinear
    # filter, and so are tensors with antialias=True (v2's default): Stoker's interpolation=2.
    # Only antialias=False (tensors) is plain bilinear.
    _require_bilinear(t)
    return 2 if getattr(t, "antialias", None) is not False else 0


def _to_float(t, is_float):
    if is_float:
        raise _Unsupported("the image is float32 already")
    return [_op("to_float")], True


def _convert_dtype(t, is_float):
    import torch  # torchvision's transforms exist only with torch

    dtype = getattr(t, "dtype", None)
    if isinstance(dtype, dict):  # v2 ToDtype({Image: torch.float32, ...})
        dtype = next(iter(dtype.values()))
    if dtype == torch.float32 and getattr(t, "scale", True):
        return ([], True) if is_float else ([_op("to_float")], True)
    if dtype == torch.uint8 and not is_float:
        return [], False
    raise _Unsupported(f"dtype={dtype} (scale={getattr(t, 'scale', True)}): Stoker converts "
                       "uint8 to float32 in [0, 1] only")


def _normalize(t, is_float):
    if not is_float:
        raise _Unsupported("Normalize needs a float image: put ToTensor (or ConvertImageDtype) "
                           "before it")
    return [_op("normalize", mean=list(t.mean), std=list(t.std))], True


def _random_resized_crop(t, is_float):
    height, width = _hw(t.size, "size")
    scale_min, scale_max = t.scale
    ratio_min, ratio_max = t.ratio
    return [_op("random_resized_crop", height=height, width=width, scale_min=scale_min,
                scale_max=scale_max, ratio_min=ratio_min, ratio_max=ratio_max,
                interpolation=_resize_interpolation(t))], is_float


def _resize(t, is_float):
    if getattr(t, "max_size", None) is not None:
        raise _Unsupported("max_size is not supported")
    interpolation = _resize_interpolation(t)
    size = t.size
    if isinstance(size, numbers.Integral) or len(size) == 1:
        shorter = int(size) if isinstance(size, numbers.Integral) else int(size[0])
        return [_op("resize", shorter=shorter, interpolation=interpolation)], is_float
    height, width = _hw(size, "size")
    return [_op("resize", height=height, width=width, interpolation=interpolation)], is_float


def _center_crop(t, is_float):
    height, width = _hw(t.size, "size")
    return [_op("center_crop", height=height, width=width)], is_float


_PADDING_MODES = {"constant": 0, "edge": 1, "reflect": 2, "symmetric": 3}


def _pad_args(padding, fill, padding_mode):
    """pad's arguments: padding, fill and padding_mode as torchvision's."""
    if isinstance(padding, numbers.Integral):
        padding = [padding]
    if isinstance(fill, dict):  # v2: {type: fill}
        fill = next(iter(fill.values()))
    fill = [0] if fill is None else [fill] if isinstance(fill, numbers.Number) else list(fill)
    if padding_mode not in _PADDING_MODES:
        raise _Unsupported(f"padding_mode={padding_mode!r}: one of {sorted(_PADDING_MODES)}")
    return {"padding": list(padding), "fill": fill, "padding_mode": _PADDING_MODES[padding_mode]}


def _pad(t, is_float):
    return [_op("pad", **_pad_args(t.padding, t.fill, t.padding_mode))], is_float


def _random_crop(t, is_float):
    height, width = _hw(t.size, "size")
    args = {"height": height, "width": width}
    if t.padding is not None or t.pad_if_needed:
        args.update(_pad_args(t.padding or [], t.fill, t.padding_mode))
        args["pad_if_needed"] = int(bool(t.pad_if_needed))
    return [_op("random_crop", **args)], is_float


def _with_p(op):
    """The translator of a transform whose only argument is its probability p."""
    return lambda t, is_float: ([_op(op, p=t.p)], is_float)


def _require_uint8(is_float, name):
    if is_float:
        raise _Unsupported(f"{name} needs a uint8 image (as torchvision): put it before ToTensor")


def _posterize(t, is_float):
    _require_uint8(is_float, "posterize")
    return [_op("posterize", bits=t.bits, p=t.p)], is_float


def _solarize(t, is_float):
    # The threshold is in the range of the image at that point (0..255 before ToTensor, as PIL).
    return [_op("solarize", threshold=t.threshold, p=t.p)], is_float


def _equalize(t, is_float):
    _require_uint8(is_float, "equalize")
    return [_op("equalize", p=t.p)], is_float


def _adjust_sharpness(t, is_float):
    return [_op("adjust_sharpness", sharpness_factor=t.sharpness_factor, p=t.p)], is_float


def _random_erasing(t, is_float):
    args = {"p": t.p, "scale_min": t.scale[0], "scale_max": t.scale[1], "ratio_min": t.ratio[0],
            "ratio_max": t.ratio[1]}
    if t.value == "random":
        if not is_float:
            raise _Unsupported("value='random' needs a float image: put ToTensor before it")
        return [_op("random_erasing", **args, value_random=1)], is_float
    values = [t.value] if isinstance(t.value, numbers.Number) else list(t.value)
    return [_op("random_erasing", **args, value=values)], is_float


def _warp_args(t):
    """degrees_min, degrees_max, bilinear and fill of RandomRotation / RandomAffine."""
    if getattr(t, "expand", False) or t.center is not None:
        raise _Unsupported("expand and center are not supported: Stoker warps about the "
                           "centre, same size out")
    mode = _interpolation_name(t.interpolation)
    if mode not in ("nearest", "bilinear"):
        raise _Unsupported(f"interpolation={mode}: nearest or bilinear")
    fill = [t.fill] if isinstance(t.fill, numbers.Number) else list(t.fill or [])
    low, high = (float(d) for d in t.degrees)
    return ({"degrees_min": low, "degrees_max": high},
            {"bilinear": int(mode == "bilinear"), "fill": fill})


def _random_rotation(t, is_float):
    degrees, warp = _warp_args(t)
    return [_op("random_rotation", **degrees, **warp)], is_float


def _random_affine(t, is_float):
    args, warp = _warp_args(t)
    if t.translate is not None:
        args["translate"] = list(t.translate)
    if t.scale is not None:
        args.update(scale_min=t.scale[0], scale_max=t.scale[1])
    if t.shear is not None:
        args["shear"] = list(t.shear)
    return [_op("random_affine", **args, **warp)], is_float


def _gaussian_blur(t, is_float):
    if not is_float:
        raise _Unsupported("Stoker's gaussian_blur runs on float32: put ToTensor before it")
    kx, ky = _hw(t.kernel_size, "kernel_size")
    if kx != ky:
        raise _Unsupported(f"kernel_size {t.kernel_size}: Stoker blurs with a square kernel")
    low, high = (float(s) for s in t.sigma)
    if low == high:
        return [_op("gaussian_blur", ksize=kx, sigma=low)], True
    return [_op("gaussian_blur", ksize=kx, sigma_min=low, sigma_max=high)], True


def _grayscale(t, is_float):
    return [_op("grayscale", channels=t.num_output_channels)], is_float


def _jitter_amount(value, name, center=1.0):
    """ColorJitter keeps (1 - x, 1 + x) clamped at 0; Stoker takes x."""
    if value is None:
        return 0.0
    low, high = (float(v) for v in value)
    amount = round(high - center, 12)  # 1.4 - 1 is 0.3999999999999999
    expected_low = -amount if center == 0.0 else max(0.0, center - amount)
    if abs(low - expected_low) > 1e-9:
        raise _Unsupported(f"{name}={value}: Stoker takes a symmetric range [max(0, 1-x), 1+x]")
    return amount


def _color_jitter(t, is_float):
    amounts = {name: _jitter_amount(getattr(t, name), name)
               for name in ("brightness", "contrast", "saturation")}
    amounts["hue"] = _jitter_amount(t.hue, "hue", center=0.0)
    return [_op("color_jitter", **{name: x for name, x in amounts.items() if x})], is_float


def _identity(t, is_float):
    return [], is_float


def _fill_list(fill):
    """A fill argument (None, a number or one per channel) as a list."""
    if isinstance(fill, dict):  # v2: {type: fill}
        fill = next(iter(fill.values()))
    return [] if fill is None else [fill] if isinstance(fill, numbers.Number) else list(fill)


def _warp_mode(t):
    mode = _interpolation_name(t.interpolation)
    if mode not in ("nearest", "bilinear"):
        raise _Unsupported(f"interpolation={mode}: nearest or bilinear")
    return int(mode == "bilinear")


def _random_perspective(t, is_float):
    return [_op("random_perspective", distortion_scale=t.distortion_scale, p=t.p,
                bilinear=_warp_mode(t), fill=_fill_list(t.fill))], is_float


def _zoom_out(t, is_float):
    side_min, side_max = t.side_range
    return [_op("zoom_out", fill=_fill_list(t.fill), side_min=side_min, side_max=side_max,
                p=t.p)], is_float


def _random_iou_crop(t, is_float):
    return [_op("random_iou_crop", min_scale=t.min_scale, max_scale=t.max_scale,
                min_aspect_ratio=t.min_aspect_ratio, max_aspect_ratio=t.max_aspect_ratio,
                sampler_options=list(t.options), trials=t.trials)], is_float


def _sanitize_boxes(t, is_float):
    if getattr(t, "min_area", 1.0) > 1.0:
        raise _Unsupported(f"min_area={t.min_area}: Stoker's sanitize_boxes has min_size only")
    return [_op("sanitize_boxes", min_size=t.min_size)], is_float


def _photometric_distort(t, is_float):
    raise _Unsupported(
        "it permutes the channels with probability p, which no Stoker op does; its other steps "
        "are RandomApply([ColorJitter(...)], p) steps (bench/augment-recipes.sh composes them)")


def _policy(t, is_float, name, args):
    """A policy op: uint8 only (torchvision's policies take uint8 tensors), warp arguments."""
    _require_uint8(is_float, name)
    return [_op(name, **args, bilinear=_warp_mode(t), fill=_fill_list(t.fill))], is_float


def _rand_augment(t, is_float):
    return _policy(t, is_float, "rand_augment", {
        "num_ops": t.num_ops, "magnitude": t.magnitude,
        "num_magnitude_bins": t.num_magnitude_bins})


def _trivial_augment_wide(t, is_float):
    return _policy(t, is_float, "trivial_augment_wide",
                   {"num_magnitude_bins": t.num_magnitude_bins})


def _auto_augment(t, is_float):
    policy = getattr(t.policy, "value", str(t.policy))
    if policy != "imagenet":
        raise _Unsupported(f"policy={policy}: Stoker has the ImageNet policy only")
    return _policy(t, is_float, "auto_augment", {"policy": 0})


def _aug_mix(t, is_float):
    return _policy(t, is_float, "aug_mix", {
        "severity": t.severity, "mixture_width": t.mixture_width,
        "chain_depth": t.chain_depth, "alpha": t.alpha, "all_ops": int(bool(t.all_ops))})


def _nested(t, is_float, position, sequence):
    """The ops of a combinator's transforms, as an op list; they must keep the image's type.
    For RandomChoice and RandomOrder (sequence=False) each of its transforms must stay one op:
    a Compose inside becomes random_apply(ops=[...], p=1)."""
    ops = []
    for i, unit in enumerate(t.transforms):
        unit_ops = []
        for inner_position, inner in _flatten(unit, f"{position}.{i}"):
            inner_ops, inner_float = _translate_one(inner, inner_position, is_float)
            if inner_float != is_float:
                raise _Unsupported(f"the transform at position {inner_position} changes the "
                                   "image's type; a combinator's transforms must keep it")
            unit_ops.extend(inner_ops)
        if sequence or len(unit_ops) == 1:
            ops.extend(unit_ops)
        elif unit_ops:
            ops.append(_op("random_apply", ops=Raw(f"[{', '.join(unit_ops)}]"), p=1))
        else:
            raise _Unsupported(f"the transform at position {position}.{i} is no op for Stoker; "
                               "leave it out of the combinator")
    if not ops:
        raise _Unsupported("no transform inside that Stoker runs")
    return Raw(f"[{', '.join(ops)}]")


def _random_apply(t, is_float, position):
    return [_op("random_apply", ops=_nested(t, is_float, position, True), p=t.p)], is_float


def _random_choice(t, is_float, position):
    weights = getattr(t, "p", None)
    if weights is None:
        return [_op("random_choice", ops=_nested(t, is_float, position, False))], is_float
    return [_op("random_choice", ops=_nested(t, is_float, position, False),
                p=list(weights))], is_float


def _random_order(t, is_float, position):
    return [_op("random_order", ops=_nested(t, is_float, position, False))], is_float


# torchvision class name (v1 and v2 share them) -> translation.
_TRANSLATIONS = {
    "ToTensor": _to_float,
    "PILToTensor": _identity,
    "ToImage": _identity,
    "ToImageTensor": _identity,
    "ConvertImageDtype": _convert_dtype,
    "ConvertDtype": _convert_dtype,
    "ToDtype": _convert_dtype,
    "Normalize": _normalize,
    "RandomResizedCrop": _random_resized_crop,
    "Resize": _resize,
    "CenterCrop": _center_crop,
    "RandomCrop": _random_crop,
    "Pad": _pad,
    "RandomErasing": _random_erasing,
    "RandomRotation": _random_rotation,
    "RandomAffine": _random_affine,
    "RandomHorizontalFlip": _with_p("horizontal_flip"),
    "RandomVerticalFlip": _with_p("vertical_flip"),
    "RandomInvert": _with_p("invert"),
    "RandomPosterize": _posterize,
    "RandomSolarize": _solarize,
    "RandomAutocontrast": _with_p("autocontrast"),
    "RandomGrayscale": _with_p("random_grayscale"),
    "RandomEqualize": _equalize,
    "RandomAdjustSharpness": _adjust_sharpness,
    "GaussianBlur": _gaussian_blur,
    "Grayscale": _grayscale,
    "ColorJitter": _color_jitter,
    "RandomPerspective": _random_perspective,
    "RandAugment": _rand_augment,
    "TrivialAugmentWide": _trivial_augment_wide,
    "AutoAugment": _auto_augment,
    "AugMix": _aug_mix,
    # The detection transforms: v2's classes, or the detection references' own of the same
    # name and arguments (references/detection/transforms.py, for torchvision without v2).
    "RandomZoomOut": _zoom_out,
    "RandomIoUCrop": _random_iou_crop,
    "SanitizeBoundingBoxes": _sanitize_boxes,
    "RandomPhotometricDistort": _photometric_distort,
}

# The detection transforms above that torchvision ships only in transforms.v2 (0.15 and later).
V2_DETECTION_TRANSFORMS = ("RandomZoomOut", "RandomIoUCrop", "SanitizeBoundingBoxes",
                           "RandomPhotometricDistort")


def torchvision_v2():
    """torchvision.transforms.v2, whose classes from_torchvision translates like v1's; an
    ImportError naming the installed torchvision and what it lacks where v2 is missing."""
    import torchvision

    try:
        from torchvision.transforms import v2
    except ImportError:
        raise ImportError(
            f"stoker: torchvision {torchvision.__version__} has no torchvision.transforms.v2 "
            f"(it arrived in 0.15), so {', '.join(V2_DETECTION_TRANSFORMS)} are missing; "
            "install torchvision >= 0.15, or use the detection references' transforms of the "
            "same names (references/detection/transforms.py), which from_torchvision translates "
            "too") from None
    return v2

# Combinators: translated with their position, for the positions of their transforms.
_COMBINATORS = {
    "RandomApply": _random_apply,
    "RandomChoice": _random_choice,
    "RandomOrder": _random_order,
}

# Transforms whose nearest Stoker equivalent is not evident from the name.
_CLOSEST = {
    "Lambda": "none: arbitrary Python cannot run on the workers; write it as supported transforms",
    "FiveCrop": "CenterCrop",
    "TenCrop": "CenterCrop",
}


def _closest(name):
    if name in _CLOSEST:
        return _CLOSEST[name]
    match = difflib.get_close_matches(name, list(_TRANSLATIONS) + list(_COMBINATORS), n=1,
                                      cutoff=0.0)
    return match[0] if match else "none"


def _inner_compose(transform):
    """The Compose a transform wraps: itself, or the `transforms` attribute of a preset class
    (torchvision's references/classification/presets.py ClassificationPresetTrain/Eval)."""
    if type(transform).__name__ == "Compose":
        return transform
    import torch  # torchvision's transforms exist only with torch

    inner = getattr(transform, "transforms", None)
    if type(inner).__name__ == "Compose" and not isinstance(transform, torch.nn.Module):
        return inner
    return None


def _flatten(transform, prefix=""):
    """(position, transform) of every transform, nested Composes opened ("2.1" = the second
    transform of the Compose at position 2)."""
    compose = _inner_compose(transform)
    if compose is None:
        yield prefix or "0", transform
        return
    yield from _flatten_list(compose.transforms, prefix)


def _flatten_list(transforms, prefix):
    for i, t in enumerate(transforms):
        yield from _flatten(t, f"{prefix}.{i}" if prefix else f"{i}")


def _translate_one(t, position, is_float):
    """(ops, is_float after) of one transform; ValueError when Stoker cannot run it."""
    name = type(t).__name__
    translate = _TRANSLATIONS.get(name)
    combinator = _COMBINATORS.get(name)
    if translate is None and combinator is None:
        supported = sorted(list(_TRANSLATIONS) + list(_COMBINATORS))
        raise ValueError(
            f"from_torchvision: transform {name} at position {position} ({t!r}) is not "
            f"supported by Stoker; closest supported: {_closest(name)}. Supported: "
            f"{', '.join(supported)}")
    try:
        if combinator is not None:
            return combinator(t, is_float, position)
        return translate(t, is_float)
    except (_Unsupported, OpTextError) as why:
        raise ValueError(f"from_torchvision: transform {name} at position {position} "
                         f"({t!r}): {why}") from None


def from_torchvision(transform, decode=False):
    """The Stoker pipeline doing what `transform` (a torchvision transform or Compose of them)
    does to a PIL RGB image, as a stoker.Pipeline (str() is the text syntax). decode=True
    starts it with decode, for datasets of encoded images. Raises ValueError for a transform
    (or argument) Stoker cannot run, naming it, its position and the closest supported one."""
    steps = []
    is_float = False
    for position, t in _flatten(transform):
        ops, is_float = _translate_one(t, position, is_float)
        steps.append((position, repr(t).replace("\n", " "), ops))
    return Pipeline(steps, decode)


def run_pipeline(pipeline, sample, seed=0, epoch=0, index=0):
    """Runs one sample through `pipeline` (text, list of op strings or stoker.Pipeline) in this
    process, as a worker would for sample `index` of `epoch` of a job with `seed`. `sample`: a
    uint8 image (numpy array or tensor H x W [x C], or a PIL image) or, for a pipeline starting
    with decode, the encoded bytes. Returns a C x H x W tensor (uint8 or float32), laid out like
    torchvision's tensors, for comparing with the original transform."""
    import numpy as np
    import torch

    from . import _stoker

    if isinstance(pipeline, (list, tuple)):
        pipeline = ", ".join(pipeline)
    if not isinstance(sample, bytes):
        sample = np.ascontiguousarray(np.asarray(sample), dtype=np.uint8)
    out = _stoker.run_pipeline(str(pipeline), sample, seed, epoch, index)
    return torch.from_numpy(out).permute(2, 0, 1)
