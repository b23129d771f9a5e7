"""SQL result values as tagged JSON, so answers of two engines compare with their types.

Both Apache Flink's answers (computed in PyFlink's own interpreter, which loads this file by path: it must
import nothing but the standard library) and Flinkbench's go through :func:`encode`; :func:`decode` gives the
Python value back exactly: a plain ``datetime`` stays plain and an aware one aware, a ``Decimal`` keeps its
scale, an ``int`` is not a ``float``.
"""
from __future__ import annotations

import datetime
import decimal
import math


def encode(value):
    """``value`` as ``[tag, payload]`` (JSON-able)."""
    if value is None:
        return ["null", None]
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int):
        return ["int", value]
    if isinstance(value, float):
        return ["float", repr(value) if math.isnan(value) or math.isinf(value) else value]
    if isinstance(value, decimal.Decimal):
        return ["decimal", str(value)]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, datetime.datetime):
        return ["datetime" if value.tzinfo is None else "datetime_tz", value.isoformat()]
    if isinstance(value, datetime.date):
        return ["date", value.isoformat()]
    if isinstance(value, datetime.time):
        return ["time", value.isoformat()]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes", bytes(value).hex()]
    if isinstance(value, dict):
        return ["map", sorted([encode(k), encode(v)] for k, v in value.items())]
    if isinstance(value, (list, tuple)):  # arrays, and Flinkbench's rows (tuples)
        return ["list", [encode(v) for v in value]]
    if hasattr(value, "_values"):  # PyFlink's Row
        return ["list", [encode(v) for v in value._values]]
    if hasattr(value, "item"):  # a numpy scalar
        return encode(value.item())
    return ["repr", repr(value)]


def decode(tagged):
    """The Python value :func:`encode` tagged."""
    tag, payload = tagged
    if tag in ("null", "bool", "int", "str", "repr"):
        return payload
    if tag == "float":
        return float(payload)
    if tag == "decimal":
        return decimal.Decimal(payload)
    if tag in ("datetime", "datetime_tz"):
        return datetime.datetime.fromisoformat(payload)
    if tag == "date":
        return datetime.date.fromisoformat(payload)
    if tag == "time":
        return datetime.time.fromisoformat(payload)
    if tag == "bytes":
        return bytes.fromhex(payload)
    if tag == "map":
        return {_hashable(decode(k)): decode(v) for k, v in payload}
    return tuple(decode(v) for v in payload)


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value
