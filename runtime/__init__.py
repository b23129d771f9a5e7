"""Flinkbench runtime: a Flink-style JobManager and TaskManagers whose tasks run on PySpark."""
__version__ = "0.1.0"


def __getattr__(name):
    if name == "LocalCluster":
        from runtime.cluster import LocalCluster
        return LocalCluster
    if name == "StreamExecutionEnvironment":
        from runtime.api.environment import StreamExecutionEnvironment
        return StreamExecutionEnvironment
    raise AttributeError(name)
