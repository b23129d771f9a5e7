"""A benchmark run's figures, made up in the shape tests/benchmarks/run_all.py writes them, for the report's tests."""
from __future__ import annotations

from tests.benchmarks.comparison import FLINKBENCH, OURS_JVM, SPARK_JVM, STRUCTURED_STREAMING, ratios


def run(side: str, rows_per_batch, jvm: str, rate: float | None, **more) -> dict:
    figures = {"setup": {"side": side, "rows_per_batch": rows_per_batch, "jvm": jvm}, "checkpoints": False,
               "load1_at_start": 0.3, "started_at": 1.0}
    if rate is None:
        return {**figures, "error": "TimeoutError: no micro-batch completed"}
    return {**figures, "rows_per_s": rate, "rows_per_cpu_s": rate / 1.8, "others_share": more.pop("others", 0.02),
            "peak_rss_gib": 1.2, **more}


def latency_run(median: float, most: float, windows: int = 6, expected: int = 6) -> dict:
    return {"windows": windows, "windows_expected": expected, "median_s": median, "min_s": median - 0.1,
            "max_s": most, "per_window_s": [median - 0.1, median, most][:windows],
            "missing": [1_800_000_000.0] * (expected - windows)}


def figures(ours_rounds=(5e6, 4e6, 4.5e6), theirs_rounds=(3e6, 3.5e6, 3e6), others: float = 0.02) -> dict:
    ours = [run(FLINKBENCH, None, OURS_JVM, r, others=others, cluster_peak_rss_gib=1.4) for r in ours_rounds]
    theirs = [run(STRUCTURED_STREAMING, 20_000_000, SPARK_JVM, r, others=others, first_batch_s=14.0)
              for r in theirs_rounds]
    mode = {FLINKBENCH: ours, STRUCTURED_STREAMING: theirs,
            "ratio": ratios([r.get("rows_per_s") for r in ours], [r.get("rows_per_s") for r in theirs]),
            "cpu_ratio": ratios([r.get("rows_per_cpu_s") for r in ours], [r.get("rows_per_cpu_s") for r in theirs])}
    return {
        "machine": {"cores": 2, "python": "3.11", "pyspark": "4.3.0", "java": "openjdk 17",
                    "load_at_start": [0.1, 0.2, 0.3], "load_at_end": [1.9, 1.5, 0.8]},
        "settings": {"latency_measure": 60.0},
        "sweep": {"runs": [run(FLINKBENCH, None, OURS_JVM, 4.2e6), run(FLINKBENCH, 2_000_000, OURS_JVM, 3.0e6),
                           run(STRUCTURED_STREAMING, 2_000_000, SPARK_JVM, 2.8e6),
                           run(STRUCTURED_STREAMING, 20_000_000, SPARK_JVM, 4.7e6),
                           run(STRUCTURED_STREAMING, 20_000_000, OURS_JVM, None)],
                  "best": {FLINKBENCH: {"side": FLINKBENCH, "rows_per_batch": None, "jvm": OURS_JVM},
                           STRUCTURED_STREAMING: {"side": STRUCTURED_STREAMING, "rows_per_batch": 20_000_000,
                                                  "jvm": SPARK_JVM}}},
        "rounds": {"without_checkpoints": mode, "with_checkpoints": mode},
        "latency": {"capacity_rows_per_s": 4_500_000, "loads": [0.05, 0.2, 0.5], "rows_per_s": [225_000, 900_000,
                                                                                               2_250_000],
                    "users": [10_000] * 3, "checkpoints": True, "structured_streaming_jvm": SPARK_JVM,
                    "best_trigger": "100 milliseconds", "trigger_sweep": [],
                    "fresh_jvms": {**latency_run(2.0, 3.4, 4, 4), "rows_per_s": 900_000},
                    FLINKBENCH: [latency_run(1.2, 1.4), latency_run(1.25, 1.6), latency_run(1.4, 1.45, 5)],
                    STRUCTURED_STREAMING: {"default": [latency_run(2.5, 3.0)] * 3,
                                           "100 milliseconds": [latency_run(1.9, 2.2), latency_run(1.1, 1.3),
                                                                latency_run(2.0, 2.6)]}},
        "first_result": {"with_archive_s": [7.1, 8.4], "first_ever_s": [11.0, None]},
    }
