/**
 * How each event of the JobManager's stream changes the panel's model: one typed handler per event
 * type. The event types are generated from runtime/events.py (events.ts), the same classes the
 * Python view model dispatches on, so both sides name and read every event the same way.
 */
import type {
  IActivity,
  ICellLink,
  ICheckpoint,
  IClusterSnapshot,
  IJobManagerInfo,
  IJobState,
  ISlotState,
  ITaskManagerState,
  ITaskMetrics
} from './types';
import { lastLine, short } from './format';
import { addStartingFromSnapshot, applyProviderDecision } from './provider';
import {
  CheckpointCompletedEvent,
  CheckpointFailedEvent,
  CheckpointRestoredEvent,
  CheckpointTriggeredEvent,
  ClusterEvent,
  EventHandlers,
  JobRestartingEvent,
  JobStatusChangedEvent,
  JobSubmittedEvent,
  LeaderChangedEvent,
  SlotAllocatedEvent,
  SlotFreedEvent,
  TaskManagerLostEvent,
  TaskManagerRegisteredEvent,
  TaskMetricsReportedEvent,
  TaskStatusChangedEvent,
  TERMINAL_JOB_STATES,
  TERMINAL_TASK_STATES
} from './events';

const MAX_CHECKPOINTS = 50;

/** True for a job or task state nothing follows (runtime/states.py's terminal states). */
export function isTerminal(state: string): boolean {
  return TERMINAL_JOB_STATES.has(state) || TERMINAL_TASK_STATES.has(state);
}

/** What the handlers change: the model's state and the few helpers it shares with the snapshot. */
export interface IEventTarget {
  taskmanagers: Map<string, ITaskManagerState>;
  jobs: Map<string, IJobState>;
  jobmanagers: IJobManagerInfo[];
  jobCells: Map<string, ICellLink>;
  newJob(jid: string, name: string): IJobState;
  loadPlan(job: IJobState): Promise<void>;
  /** The cell a job of this name was submitted from, if the panel submitted it (forgotten after). */
  takeSubmission(jobName: string): ICellLink | undefined;
  log(e: { ts?: number }, text: string, kind?: IActivity['kind']): void;
}

/** Folds events into an IEventTarget. Unknown event types are ignored, so newer JobManagers stay readable. */
export class ClusterEventFolder {
  constructor(private readonly m: IEventTarget) {}

  apply(event: ClusterEvent): void {
    const handler = this.handlers[event.type] as ((e: ClusterEvent) => void) | undefined;
    handler?.(event);
  }

  /** The stream's first message: the whole cluster, replacing what the panel knew (lost TaskManagers keep their
   * last known slots). */
  applySnapshot(snapshot: IClusterSnapshot): void {
    this.m.jobmanagers = snapshot.jobmanagers || [];
    const previous = this.m.taskmanagers;
    this.m.taskmanagers = new Map();
    for (const tm of snapshot.taskmanagers || []) {
      const lost = tm.state !== 'REGISTERED';
      const known = previous.get(tm.id);
      const slots = lost && known ? known.slots : tm.slots.map(s => ({
        index: s.index,
        jobId: s['job-id'] || null,
        jobName: s['job-name'] || null,
        tasks: new Set(s.tasks || [])
      }));
      this.m.taskmanagers.set(tm.id, { id: tm.id, host: tm.host, pid: tm.pid, lost, reason: tm.reason, slots });
    }
    addStartingFromSnapshot(this.m.taskmanagers, snapshot['resource-provider']);
    const jobs = new Map<string, IJobState>();
    for (const overview of snapshot.jobs || []) {
      const job = this.m.jobs.get(overview.jid) || this.m.newJob(overview.jid, overview.name);
      job.state = overview.state;
      job.startTime = overview['start-time'];
      job.endTime = overview['end-time'];
      job.parallelism = overview.parallelism;
      job.restarts = overview.restarts;
      job.recordsPerS = overview['records-out-per-s'] || 0;
      jobs.set(job.jid, job);
      if (!job.sinkVertices) {
        void this.m.loadPlan(job);
      }
    }
    this.m.jobs = jobs;
  }

  private readonly handlers: EventHandlers = {
    TaskManagerRegistered: e => this.onTaskManagerRegistered(e),
    TaskManagerLost: e => this.onTaskManagerLost(e),
    TaskManagerDeregistered: e => {
      this.m.taskmanagers.delete(e.tm_id); // left on purpose: gone, not lost
      this.m.log(e, `TaskManager ${short(e.tm_id)} left: ${e.reason}`);
    },
    // Memory and log lines are for the dashboard's TaskManager page; the panel shows neither.
    TaskManagerStatusReported: () => undefined,
    ResourceProviderDecision: e => {
      const line = applyProviderDecision(this.m.taskmanagers, e);
      this.m.log(e, line.text, line.kind);
    },
    SlotAllocated: e => this.onSlotAllocated(e),
    SlotFreed: e => this.onSlotFreed(e),
    JobSubmitted: e => this.onJobSubmitted(e),
    JobStatusChanged: e => this.onJobStatusChanged(e),
    TaskStatusChanged: e => this.onTaskStatusChanged(e),
    TaskMetricsReported: e => this.onTaskMetricsReported(e),
    JobRestarting: e => this.onJobRestarting(e),
    CheckpointTriggered: e => this.checkpoint(e, { status: 'IN_PROGRESS' }),
    CheckpointCompleted: e => this.onCheckpointCompleted(e),
    CheckpointFailed: e => this.onCheckpointFailed(e),
    CheckpointRestored: e => this.onCheckpointRestored(e),
    LeaderChanged: e => this.onLeaderChanged(e)
  };

  private onTaskManagerRegistered(e: TaskManagerRegisteredEvent): void {
    const slots = Array.from({ length: e.slots }, (_, index) => ({ index, jobId: null, jobName: null, tasks: new Set<string>() }));
    this.m.taskmanagers.set(e.tm_id, { id: e.tm_id, host: e.host, pid: e.pid, lost: false, slots });
    this.m.log(e, `TaskManager ${short(e.tm_id)} registered with ${e.slots} slots`);
  }

  private onTaskManagerLost(e: TaskManagerLostEvent): void {
    const tm = this.m.taskmanagers.get(e.tm_id);
    if (tm) {
      tm.lost = true;
      tm.reason = e.reason;
    }
    this.m.log(e, `TaskManager ${short(e.tm_id)} lost: ${e.reason}`, 'error');
  }

  private onSlotAllocated(e: SlotAllocatedEvent): void {
    const slot = this.slot(e.tm_id, e.slot_index);
    if (slot) {
      slot.jobId = e.job_id;
      slot.jobName = e.job_name;
    }
    this.m.log(e, `slot ${e.slot_index} of ${short(e.tm_id)} allocated to ${e.job_name}`);
  }

  private onSlotFreed(e: SlotFreedEvent): void {
    const slot = this.slot(e.tm_id, e.slot_index);
    if (slot && slot.jobId === e.job_id) {
      slot.jobId = null;
      slot.jobName = null;
      slot.tasks.clear();
    }
    this.m.log(e, `slot ${e.slot_index} of ${short(e.tm_id)} freed`);
  }

  private onJobSubmitted(e: JobSubmittedEvent): void {
    const job = this.m.newJob(e.job_id, e.name);
    job.startTime = (e.ts || Date.now() / 1000) * 1000;
    this.m.jobs.set(job.jid, job);
    const link = this.m.takeSubmission(e.name);
    if (link) {
      this.m.jobCells.set(job.jid, link);
    }
    void this.m.loadPlan(job);
  }

  private onJobStatusChanged(e: JobStatusChangedEvent): void {
    const job = this.m.jobs.get(e.job_id) || this.m.newJob(e.job_id, e.name);
    this.m.jobs.set(job.jid, job);
    job.state = e.status;
    if (isTerminal(e.status)) {
      job.endTime = (e.ts || Date.now() / 1000) * 1000;
      job.recordsPerS = 0;
    }
    if (e.status === 'FAILED' || e.status === 'FAILING') {
      this.m.log(e, `job ${job.name} ${e.status}${e.cause ? ': ' + lastLine(e.cause) : ''}`, 'error');
    }
  }

  private onTaskStatusChanged(e: TaskStatusChangedEvent): void {
    const job = this.m.jobs.get(e.job_id);
    if (!job) {
      return;
    }
    const key = `${e.vertex_id}/${e.subtask_index}`;
    const sub = job.subtasks.get(key) || {
      vertexId: e.vertex_id, taskName: e.task_name, subtask: e.subtask_index, state: e.state,
      tmId: null, slot: null, metrics: {}
    };
    const label = `${e.task_name} #${e.subtask_index + 1}`;
    const oldSlot = sub.tmId !== null && sub.slot !== null ? this.slot(sub.tmId, sub.slot) : undefined;
    oldSlot?.tasks.delete(label);
    sub.state = e.state;
    if (e.tm_id) {
      sub.tmId = e.tm_id;
      sub.slot = e.slot_index ?? null;
    }
    if (!isTerminal(e.state) && e.state !== 'CANCELING' && sub.tmId !== null && sub.slot !== null) {
      this.slot(sub.tmId, sub.slot)?.tasks.add(label);
    }
    job.subtasks.set(key, sub);
  }

  private onTaskMetricsReported(e: TaskMetricsReportedEvent): void {
    const job = this.m.jobs.get(e.job_id);
    if (!job || isTerminal(job.state)) {
      return;
    }
    const key = `${e.vertex_id}/${e.subtask_index}`;
    // A subtask that started before the stream did (the panel reconnected) is known from its first report.
    const sub = job.subtasks.get(key) || {
      vertexId: e.vertex_id, taskName: e.task_name, subtask: e.subtask_index, state: 'RUNNING', tmId: null, slot: null,
      metrics: {}
    };
    job.subtasks.set(key, sub);
    sub.metrics = (e.metrics || {}) as ITaskMetrics;
    if (job.sinkVertices && job.sinkVertices.size) {
      let rate = 0;
      job.subtasks.forEach(s => {
        if (job.sinkVertices!.has(s.vertexId) && !isTerminal(s.state)) {
          rate += s.metrics.records_out_per_s || 0;
        }
      });
      job.recordsPerS = rate;
    }
  }

  private onJobRestarting(e: JobRestartingEvent): void {
    const job = this.m.jobs.get(e.job_id);
    if (job) {
      job.restarts = Math.max(job.restarts, e.attempt);
    }
    this.m.log(e, `job ${job?.name || short(e.job_id)} restarting (attempt ${e.attempt}) in ${e.delay_s} s: ${lastLine(e.cause)}`, 'warn');
  }

  private onCheckpointCompleted(e: CheckpointCompletedEvent): void {
    this.checkpoint(e, { status: 'COMPLETED', durationS: e.duration_s, stateSize: e.state_size, path: e.external_path });
  }

  private onCheckpointFailed(e: CheckpointFailedEvent): void {
    this.checkpoint(e, { status: 'FAILED', reason: e.reason });
  }

  private onCheckpointRestored(e: CheckpointRestoredEvent): void {
    this.m.log(e, `job ${short(e.job_id)} restored from checkpoint ${e.checkpoint_id}`, 'warn');
  }

  private onLeaderChanged(e: LeaderChangedEvent): void {
    const listed = (e.jobmanagers || []) as unknown as IJobManagerInfo[];
    this.m.jobmanagers = listed.length ? listed : [{ url: e.leader_url, role: 'leader' }];
    this.m.log(e, `JobManager leader is now ${e.leader_url}`, 'warn');
  }

  private checkpoint(
    e: CheckpointTriggeredEvent | CheckpointCompletedEvent | CheckpointFailedEvent,
    update: Partial<ICheckpoint>
  ): void {
    const job = this.m.jobs.get(e.job_id);
    if (!job) {
      return;
    }
    let entry = job.checkpoints.find(c => c.id === e.checkpoint_id && c.isSavepoint === !!e.is_savepoint);
    if (!entry) {
      entry = { id: e.checkpoint_id, status: 'IN_PROGRESS', isSavepoint: !!e.is_savepoint, triggeredAt: (e.ts || 0) * 1000 };
      job.checkpoints.unshift(entry);
      job.checkpoints.length = Math.min(job.checkpoints.length, MAX_CHECKPOINTS);
    }
    Object.assign(entry, update);
  }

  private slot(tmId: string, index: number): ISlotState | undefined {
    return this.m.taskmanagers.get(tmId)?.slots[index];
  }
}
