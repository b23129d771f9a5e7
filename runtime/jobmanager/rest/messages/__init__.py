"""Every request and response body of the JobManager's REST API, with Flink's field names.

Where Flink has the message, its class name and field names are Flink's (REST API v1 as Flink 2.3
serves it); Flinkbench's own fields sit beside them, named in the same style. Field names are
declared in these modules and nowhere else (runtime.jobmanager.rest.fields says how). Import every
message from here.
"""
from runtime.jobmanager.rest.messages.checkpoint_details import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.checkpoints import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.cluster import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.common import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.jobs import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.logs import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.metrics import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.results import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.savepoints import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.spark import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.users import *  # noqa: F401,F403
from runtime.jobmanager.rest.messages.vertices import *  # noqa: F401,F403
