"""JSON encoding of the typed dataclasses that cross process boundaries.

Every wire type is a dataclass registered with :func:`wire`. ``encode`` tags an instance with its
type name; ``decode`` rebuilds it, field by field from the type hints, so nested dataclasses, lists,
dicts, optionals, enums and id types come back as themselves. Unknown types and missing fields raise
:class:`WireError`, which the receiving side reports instead of dying.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any, TypeVar

from runtime.errors import ClusterError

T = TypeVar("T")

_REGISTRY: dict[str, type] = {}


class WireError(ClusterError, ValueError):
    """A message that cannot be decoded: not JSON, an unknown type, or fields that do not fit."""


def wire(cls: type[T]) -> type[T]:
    """Class decorator: make ``cls`` a frozen-free dataclass known to the codec by its name."""
    if not dataclasses.is_dataclass(cls):
        cls = dataclasses.dataclass(cls)
    if cls.__name__ in _REGISTRY and _REGISTRY[cls.__name__] is not cls:
        raise TypeError(f"two wire types named {cls.__name__}")
    _REGISTRY[cls.__name__] = cls
    return cls


def to_plain(obj: Any) -> Any:
    """Dataclasses to tagged dicts, enums to their values, recursively."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {"type": type(obj).__name__}
        for f in dataclasses.fields(obj):
            out[f.name] = to_plain(getattr(obj, f.name))
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k.value if isinstance(k, enum.Enum) else k): to_plain(v) for k, v in obj.items()}
    return obj


def encode(obj: Any) -> str:
    """``obj`` (a wire dataclass) as tagged JSON text."""
    return json.dumps(to_plain(obj), separators=(",", ":"))


def decode(text: str | bytes, expected: type[T] | None = None) -> T:
    """A wire dataclass from JSON text, checked to be an ``expected`` if given; WireError otherwise."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as err:
        raise WireError(f"message is not valid JSON: {err}") from None
    return from_plain(data, expected)


def from_plain(data: Any, expected: type[T] | None = None) -> T:
    """A wire dataclass from its tagged dict (already parsed JSON); WireError when it does not fit."""
    if not isinstance(data, dict) or "type" not in data:
        raise WireError("message must be a JSON object with a 'type' field")
    cls = _REGISTRY.get(data["type"])
    if cls is None:
        raise WireError(f"unknown message type {data['type']!r}")
    if expected is not None and not issubclass(cls, expected):
        raise WireError(f"expected a {expected.__name__}, got {data['type']}")
    return _build(cls, data)


def build(cls: type[T], data: Any) -> T:
    """An instance of the dataclass ``cls`` from its plain form, registered as a wire type or not (a
    snapshot kept in a file); WireError when it does not fit."""
    if not isinstance(data, dict):
        raise WireError(f"expected a {cls.__name__} object")
    return _build(cls, data)


def _build(cls: type, data: dict) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{cls.__name__}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise WireError(f"{cls.__name__} is missing field '{f.name}'")
    return cls(**kwargs)


def _key(hint: Any, key: str, where: str) -> Any:
    """A JSON object's key (always text) as the dict's key type: an enum, an int, or text."""
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _convert(hint, key, where)
    if hint is int:
        try:
            return int(key)
        except ValueError:
            raise WireError(f"{where}: key {key!r} is not an integer") from None
    return key


def _convert(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, where) if len(inner) == 1 else value
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise WireError(f"{where}: expected a list")
        items = [_convert(args[0] if args else Any, v, where) for v in value]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise WireError(f"{where}: expected an object")
        key = args[0] if args else Any
        return {_key(key, k, where): _convert(args[1] if args else Any, v, where) for k, v in value.items()}
    if isinstance(hint, type):
        if dataclasses.is_dataclass(hint):
            if not isinstance(value, dict):
                raise WireError(f"{where}: expected an object")
            return _build(_REGISTRY.get(value.get("type"), hint), value)
        if issubclass(hint, enum.Enum):
            try:
                return hint(value)
            except ValueError:
                raise WireError(f"{where}: {value!r} is not a {hint.__name__}") from None
        if hint is float and isinstance(value, int):
            return float(value)
        if hint in (str, int, float, bool) or issubclass(hint, str):
            if hint is bool and not isinstance(value, bool) or hint is not bool and isinstance(value, bool) or \
                    not isinstance(value, str if issubclass(hint, str) else hint):
                raise WireError(f"{where}: expected {hint.__name__}, got {type(value).__name__}")
            return hint(value)
    return value
