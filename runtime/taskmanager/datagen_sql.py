"""The generated source's rows as Spark SQL: a bounded offset range per bundle, each column a pure function of
(seed, column, offset), so a replay after a failure and a batch query over the same offsets see the same rows.
Runs on a task's executor thread, through the TaskManager's session (runtime.taskmanager.spark)."""
from __future__ import annotations

from typing import Any

HASH_MODULUS = 2_147_483_647  # a prime: uniform enough for generated values


def generate(session, schema, params: dict, ranges: list[tuple[int, int, int]]):
    """Rows at the offsets of ``ranges`` (start, end, step) of a deterministic generated stream.

    Row ``n`` is a pure function of (seed, column, n), so a replay after a failure reproduces the same
    rows, and a batch query over the same offsets sees the same rows as the stream. With
    ``keep_offset`` the offset stays as column ``_offset``. One SQL statement: one call into Spark and
    one analysis per bundle, where a column at a time through the DataFrame API took dozens.
    """
    seed = int(params.get("seed", 0))
    fields = params.get("fields", {})
    columns = ["_offset"] if params.get("keep_offset") else []
    for field in schema.fields:
        type_name = field.dataType.simpleString()
        expr = datagen_column(field.name, type_name, fields.get(field.name, {}), seed, params)
        columns.append(f"CAST({expr} AS {type_name}) AS `{field.name.replace('`', '``')}`")
    source = " UNION ALL ".join(offsets_sql(lo, hi, step) for lo, hi, step in ranges)
    return session.sql(f"SELECT {', '.join(columns)} FROM ({source})")


def offsets_sql(lo: int, hi: int, step: int) -> str:
    """A query of one column, ``_offset``: lo, lo + step, ... below hi, whose generated Java is the same
    for every bundle of a source.

    Spark compiles each plan's code with its literals written in; ``range(lo, hi)`` would make every bundle
    new code to compile (two Janino runs per bundle, then JIT work and metaspace for the new classes). So
    the range's length is padded to one of a few sizes (:func:`padded_count`, cut back to the exact count by
    a filter) and the bounds enter as :func:`opaque` values that the code reads instead of containing.
    """
    count = len(range(lo, hi, step))
    return (f"SELECT id * {int(step)} + {opaque(lo)} AS _offset FROM range(0, {padded_count(count)}, 1, 1) "
            f"WHERE id < {opaque(count)}")


def padded_count(count: int) -> int:
    """The least of 64 and m * 2**k (m in 4..7) that holds ``count``: at most four sizes per doubling, each
    at most a quarter above the count."""
    if count <= 64:
        return 64
    shift = count.bit_length() - 3
    return -(-count >> shift) << shift


def opaque(value: int) -> str:
    """``value`` as a BIGINT expression the optimizer cannot fold into a literal: a one-element array (code
    refers to array literals rather than writing them out) read at the partition's index, which is not a
    constant. Only for single-partition plans, where that index is always 0."""
    return f"element_at(array(CAST({int(value)} AS BIGINT)), spark_partition_id() + 1)"


def datagen_column(name: str, type_name: str, opts: dict, seed: int, params: dict) -> str:
    """Spark SQL for one generated column; see the datagen connector for the options."""
    h = f"pmod(xxhash64(_offset, {int(seed)}, '{_sql_str(name)}'), {HASH_MODULUS})"
    unit = f"({h} / {float(HASH_MODULUS)}D)"  # doubles throughout: a plain 2147483647.0 is a DECIMAL in Spark SQL
    kind = opts.get("kind", "sequence" if type_name in ("bigint", "int") and name in ("id", "seq") else "random")
    base = type_name.split("(")[0]
    if base in ("timestamp", "timestamp_ntz", "timestamp_ltz"):
        start = float(params.get("timestamp_start", 1_700_000_000))
        rate = float(params.get("event_rate") or params.get("rows_per_second") or 1000.0)
        lateness = float(opts.get("max_out_of_orderness", params.get("max_out_of_orderness", 0.0)))
        # in microseconds as doubles: decimal seconds overflow their scale for starts like time.time(). Rounded
        # as floor(x + 0.5), a BIGINT: Spark's round() of a double goes through a BigDecimal made from the double's
        # decimal string, per row (a third of a clicks bundle's time, most of its garbage).
        jitter = f" - {unit} * {lateness * 1e6:.6f}D" if lateness else ""
        return f"timestamp_micros(floor({start * 1e6:.6f}D + _offset * {1e6 / rate:.9f}D{jitter} + 0.5D))"
    if kind == "sequence":
        return f"{int(opts.get('start', 0))} + _offset"
    if "values" in opts:
        values = ", ".join(_sql_literal(v) for v in opts["values"])
        return f"element_at(array({values}), CAST(pmod({h}, {len(opts['values'])}) + 1 AS INT))"
    if base in ("int", "bigint", "smallint", "tinyint"):
        lo, hi = int(opts.get("min", 0)), int(opts.get("max", 1_000_000))
        return f"{lo} + pmod({h}, {hi - lo + 1})"
    if base in ("double", "float") or base.startswith("decimal"):
        lo, hi = float(opts.get("min", 0.0)), float(opts.get("max", 1.0))
        return f"{lo!r}D + {unit} * {hi - lo!r}D"
    if base == "boolean":
        return f"pmod({h}, 2) = 1"
    if base == "string":
        cardinality = int(opts.get("cardinality", 1000))
        prefix = _sql_str(opts.get("prefix", f"{name}-"))
        return f"concat('{prefix}', CAST(pmod({h}, {cardinality}) AS STRING))"
    if base == "date":
        return f"date_add(DATE'2024-01-01', CAST(pmod({h}, 365) AS INT))"
    raise ValueError(f"datagen cannot generate column '{name}' of type {type_name}")


def _sql_str(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("'", "\\'")


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return f"'{_sql_str(value)}'"
