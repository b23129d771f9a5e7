"""The TaskManager's SparkRunner over a test's own Spark session, so that the runtime's plans run on it."""
from __future__ import annotations

from runtime.config import Configuration
from runtime.taskmanager.spark import SparkRunner


class GivenSession:
    """A SparkSessionKeeper's face over the test's session."""
    master = "local[1]"

    def __init__(self, session):
        self._session = session

    def session(self):
        return self._session

    def note_failure(self, err: BaseException) -> None:
        pass


def runner_on(session) -> SparkRunner:
    return SparkRunner(Configuration.load({}), 1, keeper=GivenSession(session))
