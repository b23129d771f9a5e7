"""Barrier alignment: a task with several inputs snapshots once every input delivered the barrier."""
from __future__ import annotations

from runtime.data_messages import CheckpointBarrier
from runtime.taskmanager.input_gate import InputGate


class BarrierAligner:
    """Which channels have delivered the barrier of the checkpoint being aligned."""

    def __init__(self):
        self.checkpoint_id: int | None = None
        self.barrier: CheckpointBarrier | None = None
        self.arrived: set[int] = set()

    def start(self, barrier: CheckpointBarrier) -> None:
        self.checkpoint_id, self.barrier, self.arrived = barrier.checkpoint_id, barrier, set()

    def arrive(self, channel: int, barrier: CheckpointBarrier, gate: InputGate) -> bool:
        """Hold ``channel`` back now that it delivered ``barrier``; True once every input has. A newer
        barrier overtaking an unfinished alignment drops that one (its held channels go on); an older
        barrier is late and ignored."""
        if self.checkpoint_id is None or barrier.checkpoint_id > self.checkpoint_id:
            if self.checkpoint_id is not None:
                gate.unblock_all()
            self.start(barrier)
        elif barrier.checkpoint_id < self.checkpoint_id:
            return False
        self.arrived.add(channel)
        gate.block(channel)
        return self.complete(gate)

    def complete(self, gate: InputGate) -> bool:
        return all(i in self.arrived or ch.finished for i, ch in enumerate(gate.channels))

    def reset(self) -> None:
        self.checkpoint_id, self.barrier, self.arrived = None, None, set()
