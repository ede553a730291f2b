"""Op text checked against the op registry: what from_torchvision writes must name ops and
arguments the registry has, with values in the registry's ranges.

The registry (augment/op_registry.h, read through stoker._stoker.op_schemas()) is the one
description of the ops; nothing here restates an op's arguments or limits, so a renamed argument
or a changed range shows up here as soon as the C++ side changes.
"""

import numbers

_SCHEMAS = None


class OpTextError(Exception):
    """An op or argument the registry does not take (the message says which and why)."""


class Raw(str):
    """An argument value written as it is (a nested op list)."""


def schemas():
    """The registry's schemas by op name, read once."""
    global _SCHEMAS
    if _SCHEMAS is None:
        from . import _stoker

        _SCHEMAS = {schema["name"]: schema for schema in _stoker.op_schemas()}
    return _SCHEMAS


def num(x):
    """A number in the text syntax (shortest round-tripping form)."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def _in_range(value, bounds):
    low, high = bounds["min"], bounds["max"]
    above = value > low if bounds["min_open"] else value >= low
    below = value < high if bounds["max_open"] else value <= high
    return above and below


def _check_value(op, arg, value):
    if arg["type"] == "int" and not float(value).is_integer():
        raise OpTextError(f"{arg['name']}={num(value)}: Stoker's {op}.{arg['name']} takes an "
                          "integer")
    bounds = arg["range"]
    if bounds is not None and not _in_range(float(value), bounds):
        text = bounds["text"]
        where = f"in {text}" if text[0] in "[(" else text
        raise OpTextError(f"{arg['name']}={num(value)}: Stoker's {op}.{arg['name']} must be "
                          f"{where}")


def _format(op, arg, value):
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, (list, tuple)):
        for v in value:
            _check_value(op, arg, v)
        return f"[{', '.join(num(v) for v in value)}]"
    if not isinstance(value, numbers.Number):
        try:
            value = float(value)  # A 0-d tensor or NumPy scalar.
        except (TypeError, ValueError):
            raise OpTextError(f"{arg['name']}={value!r}: Stoker's {op}.{arg['name']} takes a "
                              "number") from None
    _check_value(op, arg, value)
    return num(value)


def op_text(op, **args):
    """`op(name=value, ...)` in the text syntax, in the order given; OpTextError when the
    registry has no such op or argument, or a value is outside the argument's range."""
    schema = schemas().get(op)
    if schema is None:
        raise OpTextError(f"Stoker has no op {op}")
    by_name = {arg["name"]: arg for arg in schema["args"]}
    parts = []
    for name, value in args.items():
        arg = by_name.get(name)
        if arg is None:
            raise OpTextError(f"Stoker's {op} has no argument {name} (its arguments: "
                              f"{', '.join(by_name) or 'none'})")
        parts.append(f"{name}={_format(op, arg, value)}")
    return f"{op}({', '.join(parts)})" if parts else op
