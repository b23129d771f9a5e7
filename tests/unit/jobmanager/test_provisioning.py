"""The local resource provider's decisions, event by event, with no process started."""
import itertools

from runtime.jobmanager.provisioning import (Announce, ClusterStopping, Departed, Observed, ProcessExited, Provisioner,
                                             ProvisioningPolicy, ReleaseTaskManager, StartTaskManager, StopTaskManager)


def provisioner(max_tms=4, slots=2, idle=30.0, standby=0, start_timeout=120.0):
    ids = (f"tm-{i}" for i in itertools.count(1))
    return Provisioner(ProvisioningPolicy(slots, max_tms, idle, standby, start_timeout), lambda: next(ids))


def starts(actions):
    return [a.tm_id for a in actions if isinstance(a, StartTaskManager)]


def stops(actions):
    return [a.tm_id for a in actions if isinstance(a, StopTaskManager)]


def said(actions, decision):
    return [a for a in actions if isinstance(a, Announce) and a.decision == decision]


def test_a_job_on_an_empty_cluster_gets_just_enough_task_managers():
    p = provisioner()
    actions = p.handle(Observed(0.0, 6, {}))
    assert starts(actions) == ["tm-1", "tm-2", "tm-3"]
    assert [a.tm_id for a in said(actions, "requested")] == ["tm-1", "tm-2", "tm-3"]
    assert not said(actions, "refused")
    assert starts(p.handle(Observed(1.0, 6, {}))) == [], "the ones starting already cover the demand"
    registered = p.handle(Observed(9.0, 6, {"tm-1": (2, 0), "tm-2": (2, 0)}))
    assert [a.tm_id for a in said(registered, "registered")] == ["tm-1", "tm-2"] and not starts(registered)


def test_demand_beyond_the_maximum_is_refused_once_naming_what_the_cluster_can_give():
    p = provisioner(max_tms=1, slots=2)
    actions = p.handle(Observed(0.0, 4, {}))
    assert starts(actions) == ["tm-1"]
    [refusal] = said(actions, "refused")
    assert "4 slots are needed but the cluster can give at most 2" in refusal.reason
    assert "max-taskmanagers 1" in refusal.reason
    assert not p.handle(Observed(1.0, 4, {})), "said once while the demand stays the same"
    assert said(p.handle(Observed(2.0, 6, {})), "refused"), "a new demand is refused again"
    assert p.can_give() == 2


def test_an_idle_task_manager_it_started_stops_after_the_timeout_and_not_while_slots_are_wanted():
    p = provisioner(idle=30.0)
    p.handle(Observed(0.0, 2, {}))
    p.handle(Observed(5.0, 0, {"tm-1": (2, 2)}))
    idle = p.handle(Observed(10.0, 0, {"tm-1": (2, 0)}))
    assert [a.tm_id for a in said(idle, "idle")] == ["tm-1"] and not stops(idle)
    assert not stops(p.handle(Observed(39.0, 0, {"tm-1": (2, 0)})))
    assert not stops(p.handle(Observed(41.0, 2, {"tm-1": (2, 0)}))), "a waiting request may still use it"
    assert stops(p.handle(Observed(42.0, 0, {"tm-1": (2, 0)}))) == ["tm-1"]
    assert p.taskmanagers == {}


def test_task_managers_it_did_not_start_count_as_capacity_and_are_never_stopped():
    p = provisioner(idle=1.0)
    assert not starts(p.handle(Observed(0.0, 4, {"manual-1": (4, 0)})))
    assert not stops(p.handle(Observed(100.0, 0, {"manual-1": (4, 0)})))
    assert starts(p.handle(Observed(101.0, 6, {"manual-1": (4, 0)}))) == ["tm-1"]


def test_a_task_manager_lost_with_slots_in_use_is_replaced_and_an_idle_one_is_not():
    p = provisioner()
    p.handle(Observed(0.0, 0, {"manual-1": (2, 2), "manual-2": (2, 0)}))
    actions = p.handle(Observed(1.0, 0, {"manual-2": (2, 0)}))
    assert starts(actions) == ["tm-1"] and "replaces lost TaskManager manual-1" in said(actions, "requested")[0].reason
    assert not starts(p.handle(Observed(2.0, 0, {})))


def test_a_lost_task_manager_it_started_has_its_process_ended():
    p = provisioner()
    p.handle(Observed(0.0, 2, {}))
    p.handle(Observed(1.0, 0, {"tm-1": (2, 1)}))
    actions = p.handle(Observed(2.0, 0, {}))
    assert stops(actions) == ["tm-1"] and starts(actions) == ["tm-2"]


def test_a_process_that_exits_after_registering_is_released_at_once():
    p = provisioner()
    p.handle(Observed(0.0, 2, {}))
    p.handle(Observed(1.0, 0, {"tm-1": (2, 2)}))
    [release] = p.handle(ProcessExited("tm-1", -9, 2.0))
    assert isinstance(release, ReleaseTaskManager) and "exited with code -9" in release.reason
    assert starts(p.handle(Observed(2.1, 0, {}))) == ["tm-2"], "then lost with its slots in use: replaced"


def test_standby_task_managers_are_kept_ready_and_never_stopped_for_being_idle():
    p = provisioner(standby=1, idle=5.0)
    assert starts(p.handle(Observed(0.0, 0, {}))) == ["tm-1"]
    assert not starts(p.handle(Observed(1.0, 0, {})))
    assert not stops(p.handle(Observed(100.0, 0, {"tm-1": (2, 0)})))
    assert starts(p.handle(Observed(101.0, 0, {"tm-1": (2, 2)}))) == ["tm-2"], "the standby was taken: another"
    p.handle(Observed(110.0, 0, {"tm-1": (2, 2), "tm-2": (2, 0)}))
    assert stops(p.handle(Observed(120.0, 0, {"tm-1": (2, 0), "tm-2": (2, 0)}))) == ["tm-2"], \
        "one spare is kept: the one idle for the shortest time"
    assert not stops(p.handle(Observed(200.0, 0, {"tm-1": (2, 0)})))


def test_failed_starts_are_given_up_and_retried_with_back_off():
    p = provisioner(start_timeout=60.0)
    p.handle(Observed(0.0, 2, {}))
    actions = p.handle(ProcessExited("tm-1", 1, 3.0))
    assert said(actions, "given-up") and not starts(actions), "backing off for a second"
    assert starts(p.handle(Observed(4.0, 2, {}))) == ["tm-2"]
    timed_out = p.handle(Observed(65.0, 2, {}))
    assert stops(timed_out) == ["tm-2"] and "did not register within 60 s" in said(timed_out, "given-up")[0].reason
    assert not starts(timed_out) and starts(p.handle(Observed(67.5, 2, {}))) == ["tm-3"], "after 2 s of back-off"


def test_a_task_manager_that_leaves_on_purpose_is_not_replaced_but_its_jobs_demand_is_served():
    p = provisioner()
    p.handle(Observed(0.0, 2, {}))
    p.handle(Observed(5.0, 0, {"tm-1": (2, 2), "manual-1": (2, 2)}))
    assert p.handle(Departed("manual-1", 6.0)) == []
    assert p.handle(Observed(6.1, 0, {"tm-1": (2, 2)})) == [], "gone on purpose: neither lost nor replaced"
    assert starts(p.handle(Observed(8.0, 2, {"tm-1": (2, 2)}))) == ["tm-2"], "its job asks again: demand is served"


def test_a_stopping_cluster_starts_nothing_whatever_leaves_or_waits():
    p = provisioner(standby=1)
    p.handle(Observed(0.0, 0, {"manual-1": (2, 2), "manual-2": (2, 0)}))
    assert p.handle(ClusterStopping(1.0)) == []
    actions = p.handle(Observed(1.5, 0, {"manual-2": (2, 0)}))  # lost with slots in use: replaced when running
    actions += p.handle(Observed(2.0, 6, {}))
    actions += p.handle(ProcessExited("tm-9", 1, 2.5))
    assert not starts(actions) and not said(actions, "requested") and not said(actions, "refused")
