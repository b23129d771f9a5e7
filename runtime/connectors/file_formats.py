"""Files of the filesystem connector: CSV (no header, as Flink writes it), JSON lines and Parquet, and
Hive-style partition directories (``key=value``) on both the reading and the writing side."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc

DEFAULT_PARTITION = "__DEFAULT_PARTITION__"  # Flink's directory name for a NULL partition value
EXTENSIONS = {"csv": "csv", "json": "json", "parquet": "parquet"}


def write_file(table: pa.Table, path: str, fmt: str) -> None:
    """One file of ``table`` in ``fmt``; times as ``yyyy-MM-dd HH:mm:ss.ffffff`` text in CSV and JSON."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
        return
    table = _times_as_text(table)
    if fmt == "csv":
        import pyarrow.csv as csv

        csv.write_csv(table, path, csv.WriteOptions(include_header=False, quoting_style="needed"))
        return
    import json

    with open(path, "w") as out:
        for row in table.to_pylist():
            out.write(json.dumps(row, default=str) + "\n")


def _times_as_text(table: pa.Table) -> pa.Table:
    for i, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            text = pc.strftime(table.column(i).cast(pa.timestamp("us", tz="UTC")), format="%Y-%m-%d %H:%M:%S")
            table = table.set_column(i, field.name, text)
    return table


def write_partitioned(table: pa.Table, root: str, stem: str, fmt: str, partition_by: list[str]) -> None:
    """``table`` under ``root``, one file per partition in ``k1=v1/k2=v2/`` folders (the values not repeated
    inside the files)."""
    ext = EXTENSIONS[fmt]
    if not partition_by:
        write_file(table, os.path.join(root, f"{stem}.{ext}"), fmt)
        return
    keys = table.select(partition_by).to_pylist()
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(tuple(key[c] for c in partition_by), []).append(i)
    data = table.drop_columns(partition_by)
    for values, rows in groups.items():
        folder = os.path.join(root, *[f"{c}={DEFAULT_PARTITION if v is None else v}" for c, v in zip(partition_by, values)])
        write_file(data.take(rows), os.path.join(folder, f"{stem}.{ext}"), fmt)


def list_files(root: str, nested: bool) -> list[str]:
    """Data files under ``root`` (hidden and ``_`` files and folders skipped), sorted; into folders with ``nested``."""
    if os.path.isfile(root):
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")) and nested)
        found += [os.path.join(folder, f) for f in sorted(files) if not f.startswith((".", "_"))]
    return sorted(found)


def partition_values(root: str, path: str) -> dict[str, str | None]:
    """The ``key=value`` folders between ``root`` and the file ``path``."""
    relative = os.path.relpath(os.path.dirname(path), root)
    values: dict[str, str | None] = {}
    for part in relative.split(os.sep):
        if "=" in part:
            key, value = part.split("=", 1)
            values[key] = None if value == DEFAULT_PARTITION else value
    return values


def is_data_file(name: str, fmt: str) -> bool:
    return name.endswith("." + EXTENSIONS[fmt])
