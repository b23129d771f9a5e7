"""A waiting cell that records its job returns only once the recording is complete (the next cell replays it)."""
import threading

from kernel_magics.session import FlinkSession


class _Recorder:
    """What FlinkSession.finish_recording needs of a runtime.views.recording.Recorder: its finished event."""
    def __init__(self):
        self.finished = threading.Event()


def test_finish_recording_returns_after_the_recorder_has_written_its_end():
    session = FlinkSession(shell=None)
    recorder = _Recorder()
    session.recorders["job-1"] = recorder
    ending = threading.Timer(0.3, recorder.finished.set)
    ending.start()
    session.finish_recording("job-1")
    assert recorder.finished.is_set(), "the cell went on while the recording still lingered for the last events"
    assert "job-1" not in session.recorders
    session.finish_recording("no-such-job")  # a job not recorded: nothing to wait for
    session.shutdown()
