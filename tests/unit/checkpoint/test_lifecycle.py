"""Every transition of the checkpoint lifecycle state machine, including the odd orders, without processes."""
from runtime.checkpoint import lifecycle_events as ev
from runtime.checkpoint.lifecycle import CheckpointLifecycle, CheckpointSettings, Phase
from runtime.ids import ExecutionAttemptId, JobVertexId

SRC, SNK = ExecutionAttemptId("src-0"), ExecutionAttemptId("snk-0")
PARTICIPANTS = {SRC: (JobVertexId("v-src"), 0, ["src"]), SNK: (JobVertexId("v-snk"), 0, ["snk"])}


def machine(**settings) -> CheckpointLifecycle:
    return CheckpointLifecycle(CheckpointSettings(**{"timeout_s": 60.0, **settings}),
                               lambda cid, savepoint, target: f"{target or 'mem://ck'}/{'sp' if savepoint else 'chk'}-{cid}")


def trigger(m, now=100.0, **kw):
    return m.handle(ev.TriggerRequested(True, PARTICIPANTS, (SRC,), **kw), now)


def kinds(actions):
    return [type(a).__name__ for a in actions]


def acknowledge_all(m, cid, now=101.0):
    return m.handle(ev.Acknowledged(cid, SRC, f"mem://ck/{cid}/src", 10), now) + \
        m.handle(ev.Acknowledged(cid, SNK, f"mem://ck/{cid}/snk", 5), now)


def complete(m, cid, now=102.0):
    acknowledge_all(m, cid)
    out = m.handle(ev.MetadataWritten(cid), now)
    if m.settings.publishes and cid in m.pending:
        out += m.handle(ev.PointerPublished(cid), now)
    return out


def test_a_trigger_starts_at_the_sources_and_the_last_acknowledgement_writes_the_metadata():
    m = machine()
    assert trigger(m) == [ev.Started(1, False, "mem://ck/chk-1", 100.0, 60.0),
                          ev.SendTrigger(SRC, 1, 100.0, False, "mem://ck/chk-1", False)]
    assert m.handle(ev.Acknowledged(1, SRC, "mem://ck/1/src", 10), 100.5) == []
    (write,) = m.handle(ev.Acknowledged(1, SNK, "mem://ck/1/snk", 5), 101.0)
    done = write.checkpoint
    assert (done.checkpoint_id, done.size, done.duration_s) == (1, 15, 1.0)
    assert [s.operators for s in done.subtasks] == [["snk"], ["src"]] and m.pending[1].phase == Phase.ACKNOWLEDGED


def test_written_metadata_completes_the_checkpoint_and_only_then_the_sinks_commit():
    m = machine()
    trigger(m)
    acknowledge_all(m, 1)
    out = m.handle(ev.MetadataWritten(1), 102.0)
    assert kinds(out) == ["Completed", "NotifyComplete", "NotifyComplete"]
    assert out[1:] == [ev.NotifyComplete(SRC, 1), ev.NotifyComplete(SNK, 1)]
    assert m.latest().checkpoint_id == 1 and not m.pending and m.last_end == 102.0


def test_with_an_ha_store_the_pointer_is_published_before_the_sinks_commit():
    m = machine(publishes=True)
    trigger(m)
    acknowledge_all(m, 1)
    assert m.handle(ev.MetadataWritten(1), 102.0) == [ev.PublishPointer(1, "mem://ck/chk-1", ("mem://ck/chk-1",))]
    assert m.latest() is None and m.pending[1].phase == Phase.PUBLISHING
    assert kinds(m.handle(ev.PointerPublished(1), 103.0)) == ["Completed", "NotifyComplete", "NotifyComplete"]


def test_a_savepoint_is_not_published_retained_or_counted_when_it_fails():
    m = machine(publishes=True, tolerable_failures=0)
    trigger(m, is_savepoint=True, target="mem://sp", stop=True)
    assert m.pending[1].directory == "mem://sp/sp-1" and m.pending[1].stop
    out = complete(m, 1)
    assert kinds(out)[0] == "Completed" and m.latest() is None
    trigger(m, is_savepoint=True)
    assert "TooManyFailures" not in kinds(m.handle(ev.TimedOut(2), 200.0))


def test_checkpoints_beyond_the_retained_are_dropped_but_never_the_users_starting_point():
    m = machine(retained=1)
    start = complete_checkpoint(5, "mem://user/savepoint-5")
    m.start_from(start)
    assert m.latest() is start and m.ids.floor == 6
    trigger(m)
    assert "DropCheckpoint" not in kinds(complete(m, 6))
    trigger(m)
    assert ev.DropCheckpoint("mem://ck/chk-6") in complete(m, 7)
    recovered = machine(retained=1)
    recovered.start_from(complete_checkpoint(3, "mem://ck/chk-3"), retained=True)
    trigger(recovered)
    assert ev.DropCheckpoint("mem://ck/chk-3") in complete(recovered, 4)


def complete_checkpoint(cid, directory):
    return ev.CompletedCheckpoint(cid, 1.0, False, directory, [], 0.0, 0)


def test_a_decline_fails_the_checkpoint_and_tells_every_participant():
    m = machine()
    trigger(m)
    m.handle(ev.Acknowledged(1, SRC, "mem://ck/1/src", 10), 100.5)
    out = m.handle(ev.Declined(1, SNK, "sink not ready"), 101.0)
    assert out == [ev.Failed(1, False, "declined by a subtask: sink not ready", 100.0, 10, 1),
                   ev.NotifyAborted(SRC, 1), ev.NotifyAborted(SNK, 1), ev.DiscardCheckpoint("mem://ck/chk-1")]
    assert m.handle(ev.Declined(1, SNK, "again"), 101.0) == []


def test_a_timeout_while_the_metadata_is_written_wins_and_the_late_write_changes_nothing():
    m = machine()
    trigger(m)
    acknowledge_all(m, 1)
    out = m.handle(ev.TimedOut(1), 160.0)
    assert out[0].reason == "checkpoint expired before completing (timeout 60 s)"
    assert m.handle(ev.MetadataWritten(1), 161.0) == [] and m.latest() is None


def test_a_failover_while_the_pointer_is_being_published_keeps_that_checkpoints_files():
    """The HA store may already point at it: a successor leader restores it, so it must not be deleted."""
    m = machine(publishes=True)
    trigger(m)
    acknowledge_all(m, 1)
    assert kinds(m.handle(ev.MetadataWritten(1), 102.0)) == ["PublishPointer"]
    out = m.handle(ev.AbortAll("job failover: TaskManager lost"), 102.5)
    assert kinds(out) == ["Failed", "NotifyAborted", "NotifyAborted"], "no DiscardCheckpoint"
    trigger(m, now=103.0)
    out = m.handle(ev.AbortAll("job failover again"), 103.5)
    assert ev.DiscardCheckpoint("mem://ck/chk-2") in out, "one not yet published is discarded as before"


def test_metadata_and_publish_failures_fail_the_checkpoint():
    m = machine(publishes=True)
    trigger(m)
    acknowledge_all(m, 1)
    assert m.handle(ev.MetadataFailed(1, "disk full"), 102.0)[0].reason == "cannot write checkpoint metadata: disk full"
    trigger(m)
    acknowledge_all(m, 2)
    m.handle(ev.MetadataWritten(2), 102.0)
    out = m.handle(ev.PublishFailed(2, "LeadershipLost"), 103.0)
    assert out[0].reason == "cannot record the checkpoint in the HA store: LeadershipLost"


def test_an_acknowledgement_of_an_aborted_checkpoint_or_of_a_stranger_is_discarded():
    m = machine()
    trigger(m)
    out = m.handle(ev.AbortAll("job failover: TaskManager lost"), 100.5)
    assert kinds(out) == ["Failed", "NotifyAborted", "NotifyAborted", "DiscardCheckpoint"]
    assert m.consecutive_failures == 0  # an abort is not the checkpoint's fault
    late = m.handle(ev.Acknowledged(1, SRC, "mem://ck/1/src-cancelled-attempt", 10), 101.0)
    assert late == [ev.DiscardState("mem://ck/1/src-cancelled-attempt", ended=True)]  # its directory goes too
    trigger(m)
    assert m.handle(ev.Acknowledged(2, ExecutionAttemptId("old-attempt"), "mem://x", 1), 101.0) == \
        [ev.DiscardState("mem://x")]
    assert m.handle(ev.Acknowledged(2, SRC, None), 101.0) == [] and m.handle(ev.Acknowledged(2, SRC, "mem://dup"), 101.0) \
        == [ev.DiscardState("mem://dup")]


def test_more_consecutive_failures_than_tolerated_fail_the_job_and_a_completion_resets_the_count():
    m = machine(tolerable_failures=1)
    trigger(m)
    assert "TooManyFailures" not in kinds(m.handle(ev.TimedOut(1), 160.0))
    trigger(m)
    complete(m, 2)
    trigger(m)
    assert "TooManyFailures" not in kinds(m.handle(ev.TimedOut(3), 160.0))
    trigger(m)
    out = m.handle(ev.Declined(4, SRC, "no"), 170.0)
    assert out[-1] == ev.TooManyFailures("exceeded checkpoint tolerable failure threshold (1); "
                                         "last: declined by a subtask: no")


def test_periodic_triggers_wait_for_running_tasks_the_pause_and_a_free_concurrency_slot():
    m = machine(min_pause_s=5.0, max_concurrent=1)
    assert m.handle(ev.TriggerRequested(False, PARTICIPANTS, (SRC,), periodic=True), 100.0) == []
    assert m.handle(ev.TriggerRequested(False, PARTICIPANTS, (SRC,)), 100.0) == \
        [ev.Refused("not all tasks are RUNNING, so no checkpoint can be taken now")]
    assert kinds(trigger(m, periodic=True))[0] == "Started"
    assert trigger(m, now=101.0, periodic=True) == []  # one in flight
    complete(m, 1, now=102.0)
    assert trigger(m, now=104.0, periodic=True) == []  # within the minimum pause
    assert kinds(trigger(m, now=107.5, periodic=True))[0] == "Started"
    assert kinds(trigger(m, now=107.6))[0] == "Started"  # a user's trigger is not held back


# -- incremental checkpoints: references to shared files ------------------------------------------
def acknowledge_shared(m, cid, src: tuple[tuple, tuple], snk: tuple[tuple, tuple] = ((), ()), now=101.0):
    """Both participants acknowledge ``cid`` with (uploaded, reused) shared files."""
    return m.handle(ev.Acknowledged(cid, SRC, f"mem://ck/{cid}/src", 100, 10, *src), now) + \
        m.handle(ev.Acknowledged(cid, SNK, f"mem://ck/{cid}/snk", 50, 5, *snk), now)


def finish(m, cid, now=102.0):
    return m.handle(ev.MetadataWritten(cid), now)


def test_a_dropped_checkpoint_deletes_the_shared_files_only_it_referred_to():
    m = machine(retained=1)
    trigger(m)
    (write,) = acknowledge_shared(m, 1, (("s/a", "s/b"), ()), (("s/c",), ()))
    assert write.checkpoint.size == 150 and write.checkpoint.checkpointed_size == 15
    assert [s.shared for s in write.checkpoint.subtasks] == [["s/c"], ["s/a", "s/b"]]
    finish(m, 1)
    trigger(m)
    acknowledge_shared(m, 2, (("s/d",), ("s/a",)), ((), ("s/c",)))  # b's key groups changed, c's did not
    out = finish(m, 2)
    assert out[:2] == [ev.DropCheckpoint("mem://ck/chk-1"), ev.DiscardShared(("s/b",))]
    assert m.shared.live() == {"s/a", "s/c", "s/d"}


def test_a_failed_checkpoint_deletes_its_own_uploads_and_keeps_what_it_reused():
    m = machine()
    trigger(m)
    acknowledge_shared(m, 1, (("s/a",), ()))
    finish(m, 1)
    trigger(m)
    m.handle(ev.Acknowledged(2, SRC, "mem://ck/2/src", 100, 10, ("s/new",), ("s/a",)), 101.0)
    out = m.handle(ev.TimedOut(2), 200.0)
    assert out[-1] == ev.DiscardShared(("s/new",)) and m.shared.live() == {"s/a"}


def test_a_reference_to_a_deleted_shared_file_fails_the_checkpoint():
    m = machine(retained=1)
    for cid, src in ((1, (("s/a",), ())), (2, (("s/b",), ()))):  # checkpoint 2 rewrote every key group
        trigger(m)
        acknowledge_shared(m, cid, src)
        finish(m, cid)
    trigger(m)  # a subtask that had not heard of checkpoint 2 compares with checkpoint 1
    out = m.handle(ev.Acknowledged(3, SRC, "mem://ck/3/src", 100, 10, ("s/c",), ("s/a",)), 101.0)
    assert kinds(out) == ["Failed", "NotifyAborted", "NotifyAborted", "DiscardCheckpoint", "DiscardShared"]
    assert "shared state already deleted (s/a)" in out[0].reason and out[-1] == ev.DiscardShared(("s/c",))


def test_a_stray_acknowledgement_deletes_its_uploads_but_not_what_it_reused():
    m = machine()
    trigger(m)
    acknowledge_shared(m, 1, (("s/a",), ()))
    finish(m, 1)
    late = m.handle(ev.Acknowledged(1, SRC, "mem://ck/1/src-again", 100, 10, ("s/x",), ("s/a",)), 103.0)
    assert late == [ev.DiscardState("mem://ck/1/src-again"), ev.DiscardShared(("s/x",))]
    assert m.shared.live() == {"s/a"}


def test_a_full_checkpoint_is_asked_of_the_sources():
    m = machine()
    assert trigger(m, full=True)[1] == ev.SendTrigger(SRC, 1, 100.0, False, "mem://ck/chk-1", False, False, True)


def test_a_recovered_checkpoint_keeps_its_shared_files_until_it_is_dropped():
    m = machine(retained=1)
    recovered = ev.CompletedCheckpoint(3, 1.0, False, "mem://ck/chk-3",
                                       [ev.SubtaskSnapshot("v", 0, "mem://ck/chk-3/v-0", ["op"], 100, 10, ["s/a"])],
                                       0.0, 100)
    m.start_from(recovered, retained=True)
    assert m.shared.live() == {"s/a"}
    trigger(m)
    acknowledge_shared(m, 4, (("s/b",), ()))  # the first checkpoint after a restore is full
    assert ev.DiscardShared(("s/a",)) in finish(m, 4)


def test_the_only_restore_point_stays_until_a_newer_one_is_published():
    m = machine(publishes=True, retained=1)
    trigger(m)
    complete(m, 1)
    trigger(m, now=110.0)
    out = acknowledge_all(m, 2) + m.handle(ev.MetadataWritten(2), 112.0)
    out += m.handle(ev.PublishFailed(2, "ZooKeeper did not answer"), 113.0)
    out += m.handle(ev.AbortAll("job failover"), 114.0)
    assert "DropCheckpoint" not in kinds(out) and m.latest().checkpoint_id == 1
    trigger(m, now=120.0)
    assert ev.DropCheckpoint("mem://ck/chk-1") in complete(m, 3), "dropped once 3 is published"


def retained_two():
    m = machine(publishes=True, retained=2)
    for cid in (1, 2):
        trigger(m, now=100.0 * cid)
        complete(m, cid)
    return m


def test_a_restore_point_that_fails_in_two_rounds_gives_way_to_the_older_retained_one():
    m = retained_two()
    assert m.handle(ev.RestoreFailed(2, 1, "no such checkpoint file: chk-2/v-0/state.json"), 300.0) == []
    assert m.handle(ev.RestoreFailed(2, 1, "the same round, another subtask"), 300.0) == [], "one round counts once"
    fell, publish = m.handle(ev.RestoreFailed(2, 2, "no such checkpoint file: chk-2/v-0/state.json"), 301.0)
    assert (fell.failed.checkpoint_id, fell.to.checkpoint_id) == (2, 1) and "mem://ck/chk-2" in fell.reason
    assert publish == ev.PublishPointer(1, "mem://ck/chk-1", ("mem://ck/chk-1",)), "a new leader starts there too"
    assert m.latest().checkpoint_id == 1
    assert m.handle(ev.RestoreFailed(2, 3, "a late report of the given-up one"), 302.0) == []


def test_rounds_failed_while_the_storage_was_out_are_not_held_against_the_checkpoint():
    m = retained_two()
    for round in range(1, 6):
        assert m.handle(ev.RestoreFailed(2, round, "NotADirectoryError", storage_reachable=False), 300.0) == []
    assert m.latest().checkpoint_id == 2, "an outage says nothing about the checkpoint's files"
    assert m.handle(ev.RestoreFailed(2, 6, "no such checkpoint file"), 310.0) == [], "the first round that counts"
    fell, _ = m.handle(ev.RestoreFailed(2, 7, "no such checkpoint file"), 311.0)
    assert (fell.failed.checkpoint_id, fell.to.checkpoint_id) == (2, 1)


def test_with_nothing_older_to_fall_back_to_the_restore_is_impossible_naming_the_checkpoint():
    m = machine(retained=1)
    trigger(m)
    complete(m, 1)
    m.handle(ev.RestoreFailed(1, 1, "ArrowInvalid: not an Arrow file"), 200.0)
    (impossible,) = m.handle(ev.RestoreFailed(1, 2, "ArrowInvalid: not an Arrow file"), 201.0)
    assert isinstance(impossible, ev.RestoreImpossible) and "checkpoint 1 (mem://ck/chk-1)" in impossible.reason
    assert "no older retained checkpoint" in impossible.reason and m.latest() is None


def test_a_damaged_starting_savepoint_fails_the_job_rather_than_starting_from_nothing():
    m = machine()
    m.start_from(ev.CompletedCheckpoint(5, 1.0, True, "mem://sp/savepoint-5", [], 0.0, 0))
    m.handle(ev.RestoreFailed(5, 0, "missing"), 100.0)
    (impossible,) = m.handle(ev.RestoreFailed(5, 1, "missing"), 101.0)
    assert "savepoint 5 (mem://sp/savepoint-5)" in impossible.reason
