"""Input paced only while a test injects faults.

A fault test needs its input to outlast its faults, so it used a rate-limited source; but such a source
keeps its pace to the end, and the test then waited out input it no longer needed (a minute for ten
kills). ``Pace`` is a map function that holds each batch for its rows' share of a rate while a file
exists: the job reads at that pace until the test calls ``lift()``, then at full speed.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import cloudpickle

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # TaskManagers cannot import the tests


class Pace:
    """``stream.map(pace, schema=...)`` holds each batch ``rows / rows_per_second`` seconds (per subtask)
    while the pace is on; it starts on."""

    def __init__(self, path: Path, rows_per_second: float):
        self.path, self.rows_per_second = str(path), rows_per_second
        Path(path).touch()

    def __call__(self, frame):
        if os.path.exists(self.path):
            time.sleep(len(frame) / self.rows_per_second)
        return frame

    def lift(self) -> None:
        """From now on every subtask reads at full speed."""
        os.remove(self.path)
