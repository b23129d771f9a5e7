"""Configuration values as text: durations, numbers, booleans, ports, read the way Flink writes them.

Each parser takes what a YAML file, an environment variable or a ``-D key=value`` flag gives and returns
the value, or raises ValueError saying what was expected; runtime.config turns that into a ConfigError
naming the key.
"""
from __future__ import annotations

import re
from typing import Any

_DURATION_UNITS = {
    "ms": 0.001, "milli": 0.001, "millis": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0, "m": 60.0,
    "h": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


DURATION_HINT = "a duration such as '10 s' or '500 ms'"


def parse_duration(value: Any) -> float:
    """Read a Flink-style duration ("500 ms", "10s", "1 min", or a bare number of milliseconds) as seconds."""
    if isinstance(value, bool):
        raise ValueError(DURATION_HINT)
    if isinstance(value, (int, float)):
        return float(value) / 1000.0
    match = _DURATION_RE.match(str(value))
    if not match:
        raise ValueError(DURATION_HINT)
    number, unit = float(match.group(1)), match.group(2).lower() or "ms"
    if unit not in _DURATION_UNITS:
        raise ValueError(f"a duration unit among {sorted(set(_DURATION_UNITS))}")
    return number * _DURATION_UNITS[unit]


def format_duration(seconds: float) -> str:
    """The shortest exact Flink-style text for ``seconds`` (to the millisecond) that parse_duration reads back."""
    ms = round(seconds * 1000)
    return f"{ms // 1000} s" if ms % 1000 == 0 else f"{ms} ms"


def parse_int(value: Any) -> int:
    """An integer (a bool is not one)."""
    if isinstance(value, bool):
        raise ValueError("an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    raise ValueError("an integer")


def parse_float(value: Any) -> float:
    """A number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError("a number")
    try:
        return float(value)
    except ValueError:
        raise ValueError("a number") from None


def parse_bool(value: Any) -> bool:
    """true/false, yes/no, on/off, 1/0."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ValueError("true or false")


def parse_ports(value: Any) -> str:
    """A port ("9249"), a range of ports ("9250-9260"), or "" for none."""
    text = str(value).strip()
    match = re.fullmatch(r"(\d{1,5})(?:\s*-\s*(\d{1,5}))?", text)
    if text and not (match and 0 < int(match.group(1)) <= int(match.group(2) or match.group(1)) <= 65535):
        raise ValueError("a port or a range of ports such as 9250-9260")
    return text.replace(" ", "")


def parse_str(value: Any) -> str:
    """Any scalar, as text (a mapping or list is not one)."""
    if isinstance(value, (dict, list)):
        raise ValueError("a string")
    return str(value)
