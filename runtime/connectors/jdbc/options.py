"""The jdbc connector's options, with Flink's names, types and defaults, and the params they become.

Only PostgreSQL's driver is at hand (``url`` is ``jdbc:postgresql://...``). Flink's rules hold: the four
``scan.partition.*`` options come together, and so do ``lookup.cache.max-rows`` and ``lookup.cache.ttl``
(no cache without both). The same params serve a SQL table and the DataStream builders
(runtime.connectors.jdbc.datastream).
"""
from __future__ import annotations

from runtime.config_values import parse_duration
from runtime.connectors.postgres import endpoint_from_jdbc_url, split_name
from runtime.connectors.table_options import BOOLEAN, ConfigOption, TableOptionError

URL = ConfigOption("url", str, description="jdbc:postgresql://host:port/database")
TABLE_NAME = ConfigOption("table-name", str, description="the table in the database, [schema.]name")
DRIVER = ConfigOption("driver", str, "org.postgresql.Driver")
USERNAME = ConfigOption("username", str)
PASSWORD = ConfigOption("password", str)
PARTITION_COLUMN = ConfigOption("scan.partition.column", str)
PARTITION_NUM = ConfigOption("scan.partition.num", int)
LOWER_BOUND = ConfigOption("scan.partition.lower-bound", int)
UPPER_BOUND = ConfigOption("scan.partition.upper-bound", int)
FETCH_SIZE = ConfigOption("scan.fetch-size", int, 0)
CACHE_MAX_ROWS = ConfigOption("lookup.cache.max-rows", int)
CACHE_TTL = ConfigOption("lookup.cache.ttl", parse_duration)
CACHE_MISSING_KEY = ConfigOption("lookup.cache.caching-missing-key", BOOLEAN, True)
LOOKUP_MAX_RETRIES = ConfigOption("lookup.max-retries", int, 3)
FLUSH_MAX_ROWS = ConfigOption("sink.buffer-flush.max-rows", int, 100)
FLUSH_INTERVAL = ConfigOption("sink.buffer-flush.interval", parse_duration, 1.0)
SINK_MAX_RETRIES = ConfigOption("sink.max-retries", int, 3)
SINK_PARALLELISM = ConfigOption("sink.parallelism", int)

REQUIRED = (URL, TABLE_NAME)
OPTIONAL = (DRIVER, USERNAME, PASSWORD, PARTITION_COLUMN, PARTITION_NUM, LOWER_BOUND, UPPER_BOUND, FETCH_SIZE,
            CACHE_MAX_ROWS, CACHE_TTL, CACHE_MISSING_KEY, LOOKUP_MAX_RETRIES, FLUSH_MAX_ROWS, FLUSH_INTERVAL,
            SINK_MAX_RETRIES, SINK_PARALLELISM)
PARTITION = (PARTITION_COLUMN, PARTITION_NUM, LOWER_BOUND, UPPER_BOUND)


def connection_params(where: str, url: str, table_name: str, username: str | None, password: str | None,
                      driver: str = DRIVER.default) -> dict:
    """What every jdbc operator carries to reach its table; the URL is checked here, on the client."""
    endpoint_from_jdbc_url(url, username, password, where)
    schema, table = split_name(table_name)
    return {"connector": "jdbc", "where": where, "url": url, "user": username, "password": password,
            "driver": driver, "schema_name": schema, "table_name": table}


def partition_params(where: str, values: tuple, columns: list[str]) -> dict | None:
    """The scan's split by a numeric column from (column, num, lower bound, upper bound), Flink's rules: all four
    options or none, the column one of ``columns``, lower <= upper."""
    column, num, lower, upper = values
    given = {o.key: v for o, v in zip(PARTITION, values) if v is not None}
    if not given:
        return None
    if len(given) < len(PARTITION):
        missing = [o.key for o in PARTITION if o.key not in given]
        raise TableOptionError(f"{where}: the 'scan.partition.*' options must all be given together; missing "
                               f"{', '.join(repr(m) for m in missing)}")
    if column not in columns:
        raise TableOptionError(f"{where}: option 'scan.partition.column' names {column!r}, which is not a column "
                               f"(columns: {', '.join(columns)})")
    if num < 1:
        raise TableOptionError(f"{where}: option 'scan.partition.num' must be at least 1, got {num}")
    if lower > upper:
        raise TableOptionError(f"{where}: option 'scan.partition.lower-bound' ({lower}) is above "
                               f"'scan.partition.upper-bound' ({upper})")
    return {"column": column, "num": num, "lower": lower, "upper": upper}


def cache_params(where: str, max_rows: int | None, ttl_s: float | None, caching_missing_key: bool = True) -> dict:
    """The lookup cache: both ``lookup.cache.max-rows`` and ``lookup.cache.ttl`` or neither (no cache)."""
    if (max_rows is None) != (ttl_s is None):
        raise TableOptionError(f"{where}: 'lookup.cache.max-rows' and 'lookup.cache.ttl' must both be given to "
                               "cache lookups, or neither")
    if max_rows is not None and (max_rows < 1 or ttl_s <= 0):
        raise TableOptionError(f"{where}: the lookup cache needs 'lookup.cache.max-rows' >= 1 and a positive "
                               f"'lookup.cache.ttl', got {max_rows} and {ttl_s} s")
    return {"cache_max_rows": max_rows, "cache_ttl_s": ttl_s, "cache_missing_key": caching_missing_key}


def partition_ranges(partition: dict | None) -> list[tuple[int, int] | None]:
    """Each split's inclusive range of the partition column, as Flink's JdbcNumericBetweenParametersProvider cuts
    [lower, upper] (rows outside the bounds are not read, as in Flink); one unsplit range without a partition."""
    if partition is None:
        return [None]
    lower, upper, num = partition["lower"], partition["upper"], partition["num"]
    count = upper - lower + 1
    num = min(num, count)
    size, bigger = divmod(count, num)
    ranges, start = [], lower
    for i in range(num):
        end = start + size - 1 + (1 if i < bigger else 0)
        ranges.append((start, end))
        start = end + 1
    return ranges
