"""The tables every conformance query reads: small CSV files with NULLs, negative numbers, non-ASCII strings
and events out of order (by at most 1.2 s, under watermarks 2 s behind, so that no row is late in either
engine however they bundle it: Flink watermarks every row, Flinkbench every bundle)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

BASE = datetime.datetime(2024, 3, 1, 9, 0, 0)


@dataclass
class Table:
    """A CSV-backed table: its columns (Flink DDL), rows, and the watermark clause if it has a time attribute."""
    name: str
    columns: str
    rows: list[tuple]
    watermark: str = ""

    def ddl(self, folder: Path) -> str:
        """CREATE TABLE over the table's file in ``folder`` (the same text for both engines)."""
        watermark = f", WATERMARK FOR {self.watermark}" if self.watermark else ""
        return (f"CREATE TABLE {self.name} ({self.columns}{watermark}) WITH ('connector' = 'filesystem', "
                f"'path' = '{folder / self.name}', 'format' = 'csv', 'csv.null-literal' = '')")

    def write(self, folder: Path) -> None:
        """One CSV file (no header; an empty field is NULL) under ``folder/name``."""
        (folder / self.name).mkdir(parents=True, exist_ok=True)
        lines = [",".join(_text(v) for v in row) for row in self.rows]
        (folder / self.name / "part-0.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.") + f"{value.microsecond // 1000:03d}"
    return str(value)


def _at(ms: int) -> datetime.datetime:
    return BASE + datetime.timedelta(milliseconds=ms)


PRODUCTS = ["Äpfel", "café", "東京ラーメン", "Ñoquis", "pear", "Zoë tea"]
JITTER = [0, -600, 500, -1200, 300, -200, 0, 450]


def _orders() -> list[tuple]:
    rows = []
    for i in range(1, 49):
        customer = None if i % 11 == 0 else (i * 5) % 7 + 1  # 1..7; 7 has no customer row
        product = None if i % 13 == 0 else PRODUCTS[(i * 7) % len(PRODUCTS)]
        quantity = None if i % 7 == 0 else (i * 3) % 13 - 3  # -3..9
        price = None if i % 17 == 0 else Decimal((i * 37) % 2000 + 50) / 100
        discount = None if i % 5 == 0 else round(((i * 11) % 9 - 2) / 10, 1)  # -0.2..0.6
        rows.append((i, customer, product, quantity, price, discount, _at(i * 700 + JITTER[i % len(JITTER)])))
    return rows


def _customers() -> list[tuple]:
    names = ["Åsa", "Björn", "李雷", "José", "Zoë", "Ömer", "Nadia"]
    countries = ["SE", "SE", "CN", "ES", None, "TR", "DE"]
    tiers = ["gold", "silver", "gold", None, "bronze", "silver", "bronze"]
    rows = [(c, names[c - 1], countries[c - 1], tiers[c - 1]) for c in range(1, 7)]
    return rows + [(None, "Nobody", "FR", "gold"), (8, "Mårten", "SE", "silver")]


def _shipments() -> list[tuple]:
    carriers = ["DHL", "UPS", "Poste Italiane", "Ямато"]
    rows = []
    for s in range(1, 31):
        order = 99 if s == 17 else s + (s % 3)  # order 99 does not exist; some orders ship twice, some never
        rows.append((s, order, None if s % 9 == 0 else carriers[s % 4], _at(order * 700 + 200 + (s * 347) % 2500)))
    rows.sort(key=lambda r: r[3])
    for i in range(0, len(rows) - 1, 3):  # out of order, by less than the watermark's 2 s
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
    return rows


def _numbers() -> list[tuple]:
    return [
        (1, 7, 2, 10, 7.5, Decimal("1.250"), "7"), (2, -7, 2, -10, -7.5, Decimal("-1.250"), "-7"),
        (3, 7, -2, 3000000000, 0.1, Decimal("3.333"), "12.5"), (4, -39, 4, -3000000000, 2.0, Decimal("0.001"), "abc"),
        (5, 2147483647, 1, 9223372036854775807, 1e10, Decimal("9999999.999"), "2147483647"),
        (6, -2147483648, -1, 1, -0.0, Decimal("-0.500"), " 42 "), (7, None, 3, None, None, None, None),
        (8, 0, None, 0, 0.0, Decimal("0.000"), ""), (9, 15, 4, 15, 15.25, Decimal("15.250"), "15"),
        (10, 1, 3, -1, 1.0 / 3, Decimal("0.333"), "1e3"),
    ]


TABLES = [
    Table("orders", "order_id INT, customer_id INT, product STRING, quantity INT, price DECIMAL(10, 2), "
                    "discount DOUBLE, ts TIMESTAMP(3)", _orders(), "ts AS ts - INTERVAL '2' SECOND"),
    Table("customers", "customer_id INT, name STRING, country STRING, tier STRING", _customers()),
    Table("shipments", "ship_id INT, order_id INT, carrier STRING, sts TIMESTAMP(3)", _shipments(),
          "sts AS sts - INTERVAL '2' SECOND"),
    Table("numbers", "id INT, a INT, b INT, big BIGINT, d DOUBLE, m DECIMAL(10, 3), s STRING", _numbers()),
]
