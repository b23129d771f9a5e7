"""``python -m runtime.taskmanager.write_class_archive [DIR]`` (``make spark-archive``): write the Spark JVMs'
class-data archive (runtime.taskmanager.class_archive) now, from a warmed Spark session, rather than waiting
for the first idle TaskManager to write it.
"""
from __future__ import annotations

import logging
import sys

from runtime.config import Configuration
from runtime.taskmanager.class_archive import archive_path
from runtime.taskmanager.spark import SparkRunner
from runtime.taskmanager.warm_up import warm_up


def main(argv: list[str] | None = None) -> int:
    """Write the archive for the configuration TaskManagers start with (the defaults and ``FLINKBENCH_*``
    variables, as ``flinkbench taskmanager`` reads them) now, or say that one exists and maps."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    conf = Configuration.load(overrides={"taskmanager.spark.class-archive.dir": argv[0]} if argv else None)
    archive = archive_path(conf)
    if archive is None:
        print("no Spark class archive: switched off or no java found", file=sys.stderr)
        return 1
    runner = SparkRunner(conf, 1, "flinkbench-class-archive")
    try:
        warm_up(runner)
        runner.save_class_archive()
        existed = runner.keeper.archive_in_use()
    finally:
        runner.stop()
    if not archive.exists():
        print(f"no Spark class archive written to {archive} (see the log above)", file=sys.stderr)
        return 1
    print(f"Spark class archive {archive}: {'mapped by a fresh Spark JVM' if existed else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
