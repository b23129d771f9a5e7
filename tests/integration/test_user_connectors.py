"""User-written sources and sinks: classes defined in the job's own code run on the TaskManagers."""
from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest

from runtime.connectors.base import ConnectorError, SinkWriter, SourceReader


def user_classes():
    """Defined in a function, as in a notebook cell or a job file: they travel by value with the job."""

    class Countdown(SourceReader):
        """Numbers ``rows-1 .. 0``, read in bundles of at most ``bundle`` from the subtask's share."""

        def __init__(self, ctx):
            super().__init__(ctx)
            total = int(ctx.params["rows"])
            self.mine = list(range(total - 1 - ctx.subtask_index, -1, -ctx.parallelism))
            self.position = 0

        def next_bundle(self, max_rows):
            piece = self.mine[self.position:self.position + min(max_rows, int(self.ctx.params["bundle"]))]
            self.position += len(piece)
            df = self.ctx.spark.session.createDataFrame([(n,) for n in piece], "n BIGINT") if piece else None
            return df, len(piece), self.position >= len(self.mine)

        def snapshot(self):
            return {"position": self.position}

    class ParquetPerBundle(SinkWriter):
        """One Parquet file per table it receives, under ``path``."""

        async def write(self, table):
            import pyarrow.parquet as parquet

            os.makedirs(self.ctx.params["path"], exist_ok=True)
            name = f"{self.ctx.subtask_index}-{len(os.listdir(self.ctx.params['path']))}.parquet"
            parquet.write_table(table, os.path.join(self.ctx.params["path"], name))

    return Countdown, ParquetPerBundle


def test_a_user_source_and_sink_run_a_job_with_their_options(cluster, tmp_path):
    Countdown, ParquetPerBundle = user_classes()
    env = cluster.environment()
    env.set_parallelism(2)
    (env.from_source(Countdown, rows=5_000, bundle=700)
        .filter("n % 3 = 0").with_columns(square="n * n")
        .sink_to(ParquetPerBundle, path=str(tmp_path / "out")))
    job = env.execute_async("user connectors")
    assert job.wait(240) == "FINISHED"
    got = pq.read_table(str(tmp_path / "out")).to_pylist()
    assert sorted(r["n"] for r in got) == list(range(0, 5_000, 3))
    assert all(r["square"] == r["n"] ** 2 for r in got)
    names = [v["name"] for v in job.details()["vertices"]]
    assert "Countdown" in " ".join(names), names


def test_something_that_is_not_a_reader_or_writer_is_refused_when_the_job_is_built(cluster):
    env = cluster.environment()
    with pytest.raises(ConnectorError, match="expected a subclass of SourceReader"):
        env.from_source(dict)
    with pytest.raises(ConnectorError, match="expected a subclass of SinkWriter"):
        env.datagen("n BIGINT", number_of_rows=10).sink_to(SourceReader)


def test_a_task_manager_whose_spark_context_stopped_runs_the_next_job_on_a_new_one(fresh_cluster):
    """Spark stops its context after a driver OOM; the TaskManager must not stay unusable."""
    from runtime.client import JobFailed

    class StopsSpark(SourceReader):
        def next_bundle(self, max_rows):
            self.ctx.spark.session.sparkContext._jsc.sc().stop()  # as Spark does after an OutOfMemoryError
            raise RuntimeError("the Spark context went away")

    cluster = fresh_cluster(taskmanagers=1, slots=1)
    env = cluster.environment()
    env.from_source(StopsSpark).blackhole()
    with pytest.raises(JobFailed, match="the Spark context went away"):
        env.execute_async("stops spark").wait(180)
    env = cluster.environment()
    env.datagen("n BIGINT", number_of_rows=100, fields={"n": {"kind": "sequence"}}).collect()
    assert sorted(env.execute_async("after").results(timeout=180).column("n").to_pylist()) == list(range(100))
