"""The error tree: each module's named errors sit under one category, so callers catch by category."""
import pytest

from runtime import errors
from runtime.checkpoint.coordinator import CheckpointFailure
from runtime.checkpoint.storage import StorageError
from runtime.codec import WireError
from runtime.config import ConfigError
from runtime.connectors.base import ConnectorError
from runtime.connectors.push import PushError
from runtime.ddl import DDLError
from runtime.ha.services import LeadershipLost
from runtime.jobgraph import JobGraphError
from runtime.jobmanager.resource_manager import NoResourceAvailable
from runtime.security import SecurityError
from runtime.sql.errors import SqlParseError
from runtime.taskmanager.chain import OperatorError
from runtime.taskmanager.process_operator import OutputRowError
from runtime.taskmanager.slots import SlotError
from runtime.taskmanager.spark import UserFunctionError


@pytest.mark.parametrize("error, category", [
    (ConfigError, errors.ConfigurationError), (SecurityError, errors.ConfigurationError),
    (JobGraphError, errors.SubmissionError), (DDLError, errors.SubmissionError),
    (SqlParseError, errors.SubmissionError), (OperatorError, errors.SubmissionError),
    (NoResourceAvailable, errors.ClusterError), (LeadershipLost, errors.ClusterError),
    (WireError, errors.ClusterError), (SlotError, errors.ClusterError),
    (CheckpointFailure, errors.CheckpointError), (StorageError, errors.CheckpointError),
    (ConnectorError, errors.ConnectorError), (PushError, errors.ConnectorError),
    (UserFunctionError, errors.UserFunctionError), (OutputRowError, errors.UserFunctionError),
])
def test_every_named_error_has_one_category_under_the_base(error, category):
    assert issubclass(error, category) and issubclass(error, errors.FlinkbenchError)
    categories = [c for c in (errors.ConfigurationError, errors.SubmissionError, errors.ClusterError,
                              errors.CheckpointError, errors.ConnectorError, errors.UserFunctionError)
                  if issubclass(error, c)]
    assert categories == [category]


def test_errors_that_were_builtins_still_are():
    assert issubclass(ConfigError, ValueError) and issubclass(StorageError, OSError)
    assert issubclass(ConnectorError, ValueError) and issubclass(WireError, ValueError)


def test_traceback_and_last_line_helpers():
    try:
        raise KeyError("user_id")
    except KeyError as err:
        text = errors.format_traceback(err)
    assert text.startswith("Traceback (most recent call last):") and "raise KeyError" in text
    assert errors.last_line(text) == "KeyError: 'user_id'"
    assert errors.last_line("") == "" and errors.last_line(None) == ""
