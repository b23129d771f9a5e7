"""``WITH (...)`` options of CREATE TABLE, with Flink's option names, into the runtime's connector params.

datagen (rows-per-second, number-of-rows, fields.<f>.kind|start|end|min|max|length|max-past, plus this
runtime's seed, timestamp-start, event-rate, fields.<f>.values|cardinality|max-out-of-orderness),
filesystem (path, format = csv|json|parquet, source.monitor-interval; partition columns from
PARTITIONED BY), print (print-identifier) and blackhole. Unknown connectors and options are refused
naming the option, as Flink's factories do.
"""
from __future__ import annotations

import time

from runtime.config import DURATION_HINT, parse_duration
from runtime.connectors.datagen import TIMESTAMP_COLUMN, realtime_params
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError

CONNECTORS = ("datagen", "filesystem", "print", "blackhole")
DATAGEN_OPTIONS = {"rows-per-second", "number-of-rows", "seed", "timestamp-start", "event-rate"}
DATAGEN_FIELD_OPTIONS = {"kind", "start", "end", "min", "max", "length", "values", "cardinality",
                         "max-out-of-orderness", "max-past", "prefix", "null-rate"}
FILESYSTEM_OPTIONS = {"path", "format", "source.monitor-interval", "partition.default-name",
                      "sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval"}
FORMATS = ("csv", "json", "parquet")
DEFAULT_ROWS_PER_SECOND = 10_000  # Flink's datagen default


def connector_of(table) -> str:
    """The table's 'connector' option; SqlValidationError if missing, UnsupportedSqlError if not available."""
    name = table.options.get("connector")
    if name is None:
        raise SqlValidationError(f"table {table.name!r} has no 'connector' option; one of {', '.join(CONNECTORS)}")
    if name not in CONNECTORS:
        raise UnsupportedSqlError(f"table {table.name!r}: connector {name!r} is not available here; "
                                  f"one of {', '.join(CONNECTORS)}")
    return name


def check_options(table) -> None:
    """Refuse options the table's connector does not know (at CREATE TABLE, as Flink does)."""
    connector = connector_of(table)
    allowed = {"connector"} | {"datagen": DATAGEN_OPTIONS, "filesystem": FILESYSTEM_OPTIONS,
                               "print": {"print-identifier", "standard-error"}, "blackhole": set()}[connector]
    for key in table.options:
        if key in allowed or (connector == "datagen" and _field_option(table, key)):
            continue
        if connector == "filesystem" and key.startswith(("csv.", "json.", "parquet.")):
            continue
        raise SqlValidationError(f"table {table.name!r}: unsupported option {key!r} for connector {connector!r} "
                                 f"(supported: {', '.join(sorted(allowed))})")
    if connector == "filesystem":
        if "path" not in table.options:
            raise SqlValidationError(f"table {table.name!r}: the filesystem connector needs a 'path' option")
        if table.options.get("format") not in FORMATS:
            raise SqlValidationError(f"table {table.name!r}: 'format' must be one of {', '.join(FORMATS)}, "
                                     f"got {table.options.get('format')!r}")
    if table.options.get("standard-error", "false") != "false":
        raise UnsupportedSqlError(f"table {table.name!r}: print with 'standard-error' is not supported")


def _field_option(table, key: str) -> bool:
    parts = key.split(".")
    if len(parts) != 3 or parts[0] != "fields":
        return False
    if table.column(parts[1]) is None:
        raise SqlValidationError(f"table {table.name!r}: option {key!r} names no column {parts[1]!r}")
    if parts[2] not in DATAGEN_FIELD_OPTIONS:
        raise SqlValidationError(f"table {table.name!r}: unsupported option {key!r} "
                                 f"(fields.<name>.{{{', '.join(sorted(DATAGEN_FIELD_OPTIONS))}}})")
    return True


def source_params(table, runtime_mode: str) -> dict:
    """The params of the source operator that reads ``table``'s physical columns."""
    connector = connector_of(table)
    schema = ", ".join(f"`{c.name}` {c.type}" for c in table.physical)
    if connector == "datagen":
        return datagen_params(table, schema)
    if connector == "filesystem":
        options = table.options
        interval = options.get("source.monitor-interval")
        partitions = {c.name: c.type for c in table.physical if c.name in table.partition_keys}
        data_schema = ", ".join(f"`{c.name}` {c.type}" for c in table.physical if c.name not in partitions)
        return {"connector": "files", "path": _local(options["path"]), "format": options["format"],
                "schema": data_schema, "header": False, "partition_columns": partitions,
                "monitor_interval": (_option(table, "source.monitor-interval", interval, parse_duration)
                                     if interval and runtime_mode == "streaming" else None)}
    raise SqlValidationError(f"table {table.name!r} ({connector}) can only be written to, not read")


def sink_params(table) -> dict:
    """The params of the sink operator that writes into ``table``; SqlValidationError for a read-only connector."""
    connector = connector_of(table)
    if connector == "print":
        return {"connector": "print", "prefix": table.options.get("print-identifier", ""), "changelog": True}
    if connector == "blackhole":
        return {"connector": "blackhole"}
    if connector == "filesystem":
        return {"connector": "files", "path": _local(table.options["path"]), "format": table.options["format"],
                "partition_by": list(table.partition_keys)}
    raise SqlValidationError(f"table {table.name!r} ({connector}) can only be read, not written to")


def datagen_params(table, schema: str) -> dict:
    """The datagen source's params from Flink's datagen options (rates, rows, per-field kinds and bounds)."""
    options = table.options
    fields, rows = {}, _int(table, "number-of-rows")
    for column in table.physical:
        spec = {k.split(".")[2]: v for k, v in options.items() if k.startswith(f"fields.{column.name}.")}
        fields[column.name] = _field_spec(table, column, spec)
        if spec.get("kind") == "sequence" and "end" in spec:  # a sequence ends the stream, as in Flink
            length = _field(table, column, spec, "end", int) - _field(table, column, spec, "start", int, 0) + 1
            rows = length if rows is None else min(rows, length)
    params = {"connector": "datagen", "schema": schema, "seed": _int(table, "seed") or 0, "fields": fields,
              "rows_per_second": _option(table, "rows-per-second", options.get("rows-per-second",
                                                                               DEFAULT_ROWS_PER_SECOND), float)}
    if rows is not None:
        params["number_of_rows"] = rows
    for key, name in (("timestamp-start", "timestamp_start"), ("event-rate", "event_rate")):
        if key in options:
            params[name] = _option(table, key, options[key], float)
    return {**params, **_near_now(params)}


def _near_now(params: dict) -> dict:
    """Flink's datagen stamps rows with the time they are generated: without 'timestamp-start' event time starts
    now (planning time, kept in the job so that a replay generates the same rows) and, without 'event-rate'
    either, follows the wall clock (each row released when its time comes), so watermarks lag by seconds."""
    if "timestamp_start" in params or not TIMESTAMP_COLUMN.search(params["schema"]):
        return {}
    if "event_rate" in params:
        return {"timestamp_start": time.time(), "timestamp_start_now": True}
    return realtime_params()


def _field_spec(table, column, spec: dict) -> dict:
    out: dict = {}
    kind = spec.get("kind", "random")
    if kind not in ("random", "sequence"):
        raise SqlValidationError(f"table {table.name!r}: fields.{column.name}.kind must be 'random' or 'sequence'")
    out["kind"] = kind
    for key in ("min", "max", "start", "cardinality", "length"):
        if key in spec:
            out[key] = _field(table, column, spec, key, float if column.type in ("DOUBLE", "FLOAT") else int)
    if "values" in spec:
        out["values"] = [v.strip() for v in spec["values"].split(",")]
    if "prefix" in spec:
        out["prefix"] = spec["prefix"]
    for key in ("max-out-of-orderness", "max-past"):  # Flink's max-past: timestamps up to that far back from now
        if key in spec:
            out["max_out_of_orderness"] = _field(table, column, spec, key, parse_duration)
    return out


EXPECTED = {int: "an integer", float: "a number", parse_duration: DURATION_HINT}


def _option(table, key: str, value, parse):
    """``value`` of option ``key`` read by ``parse`` (int, float or parse_duration); refused naming both."""
    try:
        return parse(value)
    except (ValueError, TypeError):
        raise SqlValidationError(f"table {table.name!r}: option {key!r} must be {EXPECTED[parse]}, "
                                 f"got {value!r}") from None


def _field(table, column, spec: dict, name: str, parse, default=None):
    """The per-field option ``fields.<column>.<name>`` read by ``parse``, or ``default`` when it is not set."""
    if name not in spec:
        return default
    return _option(table, f"fields.{column.name}.{name}", spec[name], parse)


def _int(table, key: str) -> int | None:
    value = table.options.get(key)
    return None if value is None else _option(table, key, value, int)


def _local(path: str) -> str:
    import os

    return path[len("file://"):] if path.startswith("file://") else os.path.abspath(path)
