"""settle_without_pandas in a fresh interpreter: pyarrow and PySpark stop importing pandas to recognise values,
and pandas still loads, and pyarrow still recognises its objects, once a conversion needs it."""
from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from runtime.config import Configuration
from runtime.taskmanager.lean_pyspark import settle_without_pandas
settle_without_pandas(Configuration(json.loads(sys.argv[1])))
import numpy as np, pyarrow as pa, pyarrow.compute as pc
pa.scalar(1); pa.array([1, None]); pc.greater(pa.array([1, 2]), 1); pa.table({"a": np.arange(3)})
from pyspark.testing.utils import have_numpy  # what PySpark's lit and py4j converters ask
after_use = "pandas" in sys.modules
frame = pa.table({"x": [1.0, None]}).to_pandas()
import pandas as pd
nan_is_null = pa.array(pd.Series([1.0, float("nan")])).null_count == 1
connect_ok = None
if "spark.remote" in sys.argv[1]:
    import pyspark.sql.connect.functions as connect_functions
    connect_ok = hasattr(connect_functions, "expr")
print(json.dumps({"after_use": after_use, "loaded_later": "pandas" in sys.modules, "rows": len(frame),
                  "nan_is_null": nan_is_null, "connect_ok": connect_ok}))
"""


def _probe(conf: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(conf)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_values_are_converted_without_pandas_and_pandas_conversions_still_load_it():
    got = _probe({})
    assert got["after_use"] is False, "pyarrow or PySpark imported pandas to recognise a value"
    assert got["loaded_later"] and got["rows"] == 2, "to_pandas must still work"
    assert got["nan_is_null"], "pyarrow no longer treats a pandas Series as pandas once pandas is loaded"


def test_a_spark_connect_taskmanager_keeps_pysparks_own_answers():
    # PySpark's Connect client reads should_test_connect from pyspark.testing.utils, which needs pandas to be True
    assert _probe({"spark.remote": "sc://127.0.0.1:15002"})["connect_ok"] is True, "Spark Connect's functions are gone"
