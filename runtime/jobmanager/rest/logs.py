"""Log files, as Flink serves them: the list (``/jobmanager/logs``), one file by name
(``/jobmanager/logs/:logname``), the log itself (``/jobmanager/log``) and the standard output
(``/jobmanager/stdout``). Files are read by runtime.process_logs, which serves only the names it lists;
a file too long is served from its end. Every JobManager serves its own, standby or not."""
from __future__ import annotations

from runtime import process_logs
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, operation

TEXT = "text/plain"


def log_list(files: list[process_logs.LogFile]) -> m.LogListInfo:
    return m.LogListInfo(logs=[m.LogInfo(name=f.name, size=f.size, mtime=f.mtime_ms) for f in files])


class LogHandler(ApiHandler):
    """A JobManager's logs: every JobManager serves its own, standby or not. They tell of every user's jobs, so
    on a cluster with users only admins read them. Files are answered as plain text instead of JSON."""
    standby_serves = True
    admin_only = "the JobManager's logs (they tell of every user's jobs)"

    def text(self, data: bytes) -> None:
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(data)


class JobManagerLogsHandler(LogHandler):

    @operation("This JobManager's log files: its log, the log's rotations, its standard output.", m.LogListInfo)
    def get(self):
        return log_list(process_logs.listing())


class JobManagerLogFileHandler(LogHandler):

    @operation("One of this JobManager's log files by name (its end, when long).", str, media_type=TEXT)
    def get(self, logname):
        self.text(process_logs.read(logname, "JobManager"))


class JobManagerLogHandler(LogHandler):

    @operation("This JobManager's log (its end, when long).", str, media_type=TEXT)
    def get(self):
        self.text(process_logs.read(None, "JobManager"))


class JobManagerStdoutHandler(LogHandler):

    @operation("This JobManager's standard output (its end, when long).", str, media_type=TEXT)
    def get(self):
        self.text(process_logs.read_stdout("JobManager"))
