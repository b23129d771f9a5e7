"""Aggregate results as Flink's result types hold them (runtime.sql.arithmetic.aggregate_type decides the type).

SUM and AVG of an integer type stay in that type: a sum wraps around as Java's int arithmetic does, an average
is the integer quotient truncated toward zero; AVG of DECIMAL(p, s) rounds half up to the result's scale. The
group, window and over operators finish their accumulators here; without a type (DataStream aggregates) a
result stays as Python computes it.
"""
from __future__ import annotations

import decimal
import re

_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_SCALE = re.compile(r"DECIMAL\(\d+,\s*(\d+)\)")
_CONTEXT = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)


def wrap(value: int, type_: str | None) -> int:
    """``value`` wrapped into ``type_``'s two's complement range (unchanged for other types)."""
    bits = _BITS.get(type_ or "")
    if bits is None:
        return value
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def finish_sum(total, type_: str | None):
    """A SUM's result in ``type_``."""
    return wrap(total, type_) if isinstance(total, int) else total


def finish_average(total, count: int, type_: str | None):
    """An AVG's result in ``type_``: integer quotient toward zero, DECIMAL rounded half up, else a float."""
    if type_ in _BITS:
        quotient = abs(int(total)) // count
        return wrap(-quotient if total < 0 else quotient, type_)
    scale = _SCALE.fullmatch((type_ or "").replace(" ", ""))
    if scale is not None:
        exact = _CONTEXT.divide(decimal.Decimal(total), decimal.Decimal(count))
        return exact.quantize(decimal.Decimal(1).scaleb(-int(scale.group(1))), context=_CONTEXT)
    return total / count
