"""Flinkbench runtime: a Flink-style JobManager and TaskManagers whose tasks run on PySpark."""


def __getattr__(name):
    if name == "__version__":
        from runtime.version import version
        return version()
    if name == "LocalCluster":
        from runtime.cluster import LocalCluster
        return LocalCluster
    if name == "StreamExecutionEnvironment":
        from runtime.api.environment import StreamExecutionEnvironment
        return StreamExecutionEnvironment
    raise AttributeError(name)
