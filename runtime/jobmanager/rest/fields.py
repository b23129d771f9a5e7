"""REST message classes: dataclasses whose fields carry their JSON names, read three ways.

A message field is declared once with :func:`F` (its JSON name as Flink spells it, and a line of
documentation). From that one declaration :func:`encode` writes a response body, :func:`decode`
reads and checks a request body (a wrong type is a :class:`BodyError` naming the field), and
:func:`schema` describes the class for the OpenAPI document.
"""
from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from typing import Any

if typing.TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # Python 3.10 has no typing.dataclass_transform; at run time it only informs type checkers
    dataclass_transform = getattr(typing, "dataclass_transform", lambda **_: (lambda fn: fn))

JSON_NAME = "json"
DOC = "doc"
OMIT_NONE = "omit_none"

#: a JSON value the message does not constrain (a job graph, a plan)
RawJson = dict[str, Any]


class BodyError(ValueError):
    """A request body that does not fit its message class; the text names the field."""


def F(json_name: str, default: Any = dataclasses.MISSING, *, doc: str = "", factory: Any = dataclasses.MISSING,
      omit_none: bool = False):
    """A message field called ``json_name`` on the wire; with ``omit_none`` it is left out while None."""
    meta = {JSON_NAME: json_name, DOC: doc, OMIT_NONE: omit_none}
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field, F))
def message(cls):
    """Make ``cls`` a message: a keyword-only dataclass (fields are many and optional ones mix in)."""
    return dataclasses.dataclass(kw_only=True)(cls)


def json_name(f: dataclasses.Field) -> str:
    return f.metadata.get(JSON_NAME, f.name)


# -- encode (responses) ----------------------------------------------------------------------
def encode(value: Any) -> Any:
    """A message (or list/dict of them) as plain JSON values, with the declared field names."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {json_name(f): encode(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (f.metadata.get(OMIT_NONE) and getattr(value, f.name) is None)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k.value if isinstance(k, enum.Enum) else k): encode(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no infinity: "no value yet"
    return value


# -- decode (requests) -----------------------------------------------------------------------
def decode(cls: type, data: Any) -> Any:
    """A request body as ``cls``; fields it does not name are ignored, absent ones take defaults."""
    if not isinstance(data, dict):
        raise BodyError("request body must be a JSON object")
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        name = json_name(f)
        if name in data:
            values[f.name] = _check(data[name], hints[f.name], name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise BodyError(f"request body needs the field '{name}'")
    return cls(**values)


def _check(value: Any, hint: Any, name: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _check(value, inner[0], name) if len(inner) == 1 else value
    if hint is Any or (origin is dict and args[1:] == (Any,)):
        return value if hint is Any or isinstance(value, dict) else _wrong(name, "an object", value)
    if origin in (list, tuple):
        if not isinstance(value, list):
            _wrong(name, "a list", value)
        return [_check(v, args[0], f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            _wrong(name, "one of " + ", ".join(repr(m.value) for m in hint), value)
    expected = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}.get(hint)
    if expected is not None and (not isinstance(value, expected) or hint is not bool and isinstance(value, bool)):
        _wrong(name, {bool: "true or false", int: "an integer", float: "a number", str: "a string"}[hint], value)
    return value


def _wrong(name: str, what: str, value: Any):
    raise BodyError(f"field '{name}' must be {what}, got {type(value).__name__ if value is not None else 'null'}")


# -- schema (OpenAPI) ------------------------------------------------------------------------
def schema(hint: Any, components: dict[str, dict]) -> dict:
    """The OpenAPI 3.0 schema of a type; message classes go to ``components`` and are referenced."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        described = schema(inner[0], components) if len(inner) == 1 else {"oneOf": [schema(a, components) for a in inner]}
        if type(None) not in args:
            return described
        return {"allOf": [described], "nullable": True} if "$ref" in described else {**described, "nullable": True}
    if origin in (list, tuple):
        return {"type": "array", "items": schema(args[0], components)}
    if origin is dict:
        return {"type": "object", "additionalProperties": schema(args[1], components) if args[1] is not Any else {}}
    if hint is Any:
        return {}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"type": "string", "enum": [m.value for m in hint]}
    if dataclasses.is_dataclass(hint):
        if hint.__name__ not in components:
            components[hint.__name__] = {}  # placeholder first: messages may nest themselves
            components[hint.__name__] = _object_schema(hint, components)
        return {"$ref": f"#/components/schemas/{hint.__name__}"}
    simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
    for base, name in simple.items():
        if isinstance(hint, type) and issubclass(hint, base):
            return {"type": name, **({"format": "int64"} if base is int else {})}
    raise TypeError(f"no OpenAPI schema for {hint!r}")


def _object_schema(cls: type, components: dict[str, dict]) -> dict:
    hints = _hints(cls)
    props = {}
    for f in dataclasses.fields(cls):
        prop = schema(hints[f.name], components)
        if f.metadata.get(DOC):
            doc = f.metadata[DOC]
            prop = {**prop, "description": doc} if "$ref" not in prop else {"allOf": [prop], "description": doc}
        props[json_name(f)] = prop
    out = {"type": "object", "properties": props}
    if cls.__doc__:
        out["description"] = " ".join(cls.__doc__.split())
    return out


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=False)
