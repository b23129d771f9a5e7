/**
 * ClusterModel: what the panel knows about the cluster, kept current from the JobManager's event
 * stream (forwarded by the server extension). The stream starts with a ClusterSnapshot and then
 * sends every change, so the panel never polls the cluster; only a job's detail view fetches REST
 * views, for fields that no event carries (the task graph, exception traces).
 */
import { ISignal, Signal } from '@lumino/signaling';

import { lastLine, short } from './format';
import { addStartingFromSnapshot, applyProviderDecision } from './provider';
import { ApiError, eventsUrl, jobManagerAPI, requestAPI } from './request';
import {
  ICheckpoint,
  IClusterEvent,
  IConnectionInfo,
  IJobManagerInfo,
  IJobOverview,
  ITaskManagerInfo,
  ITaskMetrics
} from './types';

/** How the panel's view of the cluster stands. */
export type LinkState = 'connecting' | 'live' | 'unreachable' | 'not-configured';

export interface ISlotState {
  index: number;
  jobId: string | null;
  jobName: string | null;
  /** "task name #subtask" of every subtask deployed in the slot. */
  tasks: Set<string>;
}

export interface ITaskManagerState {
  id: string;
  host: string;
  pid?: number;
  lost: boolean;
  starting?: boolean; // started by the local resource provider, not registered yet: its slots are to come
  reason?: string;
  slots: ISlotState[];
}

export interface ISubtaskState {
  vertexId: string;
  taskName: string;
  subtask: number;
  state: string;
  tmId: string | null;
  slot: number | null;
  metrics: ITaskMetrics;
}

export interface IJobState {
  jid: string;
  name: string;
  state: string;
  startTime: number;
  endTime: number;
  parallelism: number;
  restarts: number;
  /** Sum of the sinks' output rate; from the snapshot until the first metrics arrive. */
  recordsPerS: number;
  subtasks: Map<string, ISubtaskState>;
  /** Vertices with no consumers, learnt from the job's plan; their rate is the job's rate. */
  sinkVertices: Set<string> | null;
  checkpoints: ICheckpoint[];
}

/** A notebook cell a job was submitted from. */
export interface ICellLink {
  path: string;
  cellId: string;
}

/** One line of the cluster's recent activity: the ResourceManager's decisions and failovers. */
export interface IActivity {
  ts: number;
  text: string;
  kind: 'info' | 'warn' | 'error';
}

const MAX_CHECKPOINTS = 50;
const MAX_ACTIVITY = 30;
const MAX_RECONNECT_DELAY_MS = 10000;
const TERMINAL = new Set(['FINISHED', 'FAILED', 'CANCELED']);

export function isTerminal(state: string): boolean {
  return TERMINAL.has(state);
}

export class ClusterModel {
  constructor(refreshMs: number) {
    this.refreshMs = refreshMs;
  }

  /** Emitted after any change; views throttle their own redraws. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  refreshMs: number;
  link: LinkState = 'connecting';
  error = '';
  connection: IConnectionInfo | null = null;
  faultInjection = false;
  jobmanagers: IJobManagerInfo[] = [];
  taskmanagers = new Map<string, ITaskManagerState>();
  jobs = new Map<string, IJobState>();
  activity: IActivity[] = [];
  jobCells = new Map<string, ICellLink>();
  lastEventAt = 0;

  /** Open the event stream (again); the snapshot it starts with replaces what the panel knew. */
  async connect(): Promise<void> {
    this.closeSocket();
    window.clearTimeout(this._retryTimer);
    this.link = 'connecting';
    this.emit();
    try {
      this.connection = await requestAPI<IConnectionInfo>('connection');
    } catch (error) {
      this.setUnreachable(String((error as Error).message));
      return;
    }
    if (!this.connection.configured) {
      this.link = 'not-configured';
      this.error = '';
      this.emit();
      return;
    }
    const socket = new WebSocket(eventsUrl());
    this._socket = socket;
    socket.onmessage = msg => this.onMessage(socket, msg.data);
    socket.onclose = event => {
      if (socket !== this._socket) {
        return;
      }
      this._socket = null;
      if (this.link !== 'unreachable') {
        this.setUnreachable(`event stream closed (${event.code}${event.reason ? ': ' + event.reason : ''})`);
      }
    };
  }

  /** Point the server extension at another JobManager, then reconnect. */
  async useJobManager(url: string, tokenFile: string): Promise<void> {
    this.connection = await requestAPI<IConnectionInfo>('connection', {
      method: 'POST',
      body: JSON.stringify({ url, token_file: tokenFile })
    });
    await this.connect();
  }

  /** Remember which cell a job of this name is being submitted from, to link the job to it. */
  expectSubmission(jobName: string, link: ICellLink): void {
    this._pending.set(jobName, link);
  }

  dispose(): void {
    this._disposed = true;
    window.clearTimeout(this._retryTimer);
    this.closeSocket();
    Signal.clearData(this);
  }

  private closeSocket(): void {
    const socket = this._socket;
    this._socket = null;
    if (socket) {
      socket.onclose = null;
      socket.onmessage = null;
      socket.close();
    }
  }

  private setUnreachable(message: string): void {
    this.link = message.startsWith('no JobManager configured') ? 'not-configured' : 'unreachable';
    this.error = message;
    this.emit();
    if (this._disposed || this.link === 'not-configured') {
      return;
    }
    // Retry with backoff so a JobManager that comes back (or a new leader) is picked up by itself.
    const delay = Math.min(this.refreshMs * 2 ** Math.min(this._failures++, 4), MAX_RECONNECT_DELAY_MS);
    window.clearTimeout(this._retryTimer);
    this._retryTimer = window.setTimeout(() => void this.connect(), delay);
  }

  private onMessage(socket: WebSocket, data: string): void {
    if (socket !== this._socket) {
      return;
    }
    let event: IClusterEvent;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (event.type === 'ProxyError') {
      this.setUnreachable(String(event.message));
      return;
    }
    this.lastEventAt = Date.now();
    if (event.type === 'ClusterSnapshot') {
      this._failures = 0;
      this.link = 'live';
      this.error = '';
      this.applySnapshot(event);
      void this.loadFeatures();
    } else {
      this.apply(event);
    }
    this.emit();
  }

  private async loadFeatures(): Promise<void> {
    try {
      const config = await jobManagerAPI<{ features?: { 'fault-injection'?: boolean } }>('config');
      this.faultInjection = !!config.features?.['fault-injection'];
      this.emit();
    } catch {
      this.faultInjection = false;
    }
  }

  private applySnapshot(snapshot: IClusterEvent): void {
    this.jobmanagers = snapshot.jobmanagers || [];
    const previous = this.taskmanagers;
    this.taskmanagers = new Map();
    for (const tm of (snapshot.taskmanagers || []) as ITaskManagerInfo[]) {
      const lost = tm.state !== 'REGISTERED';
      const known = previous.get(tm.id);
      const slots = lost && known ? known.slots : tm.slots.map(s => ({
        index: s.index,
        jobId: s['job-id'] || null,
        jobName: s['job-name'] || null,
        tasks: new Set(s.tasks || [])
      }));
      this.taskmanagers.set(tm.id, { id: tm.id, host: tm.host, pid: tm.pid, lost, reason: tm.reason, slots });
    }
    addStartingFromSnapshot(this.taskmanagers, snapshot['resource-provider']);
    const jobs = new Map<string, IJobState>();
    for (const overview of (snapshot.jobs || []) as IJobOverview[]) {
      const job = this.jobs.get(overview.jid) || this.newJob(overview.jid, overview.name);
      job.state = overview.state;
      job.startTime = overview['start-time'];
      job.endTime = overview['end-time'];
      job.parallelism = overview.parallelism;
      job.restarts = overview.restarts;
      job.recordsPerS = overview['records-out-per-s'] || 0;
      jobs.set(job.jid, job);
      if (!job.sinkVertices) {
        void this.loadPlan(job);
      }
    }
    this.jobs = jobs;
  }

  private newJob(jid: string, name: string): IJobState {
    return {
      jid, name, state: 'INITIALIZING', startTime: Date.now(), endTime: -1, parallelism: 0, restarts: 0,
      recordsPerS: 0, subtasks: new Map(), sinkVertices: null, checkpoints: []
    };
  }

  private async loadPlan(job: IJobState): Promise<void> {
    try {
      const detail = await jobManagerAPI<{ plan: { nodes: { id: string; inputs?: { id: string }[] }[] }; parallelism: number }>(
        `jobs/${job.jid}`
      );
      const consumed = new Set(detail.plan.nodes.flatMap(n => (n.inputs || []).map(i => i.id)));
      job.sinkVertices = new Set(detail.plan.nodes.map(n => n.id).filter(id => !consumed.has(id)));
      job.parallelism = detail.parallelism;
      this.emit();
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        job.sinkVertices = new Set();
      }
    }
  }

  /** Fold one event into the state. Unknown types are ignored so newer JobManagers stay readable. */
  apply(event: IClusterEvent): void {
    this._handlers[event.type]?.(event);
  }

  private onTaskManagerRegistered(e: IClusterEvent): void {
    const slots = Array.from({ length: e.slots }, (_, index) => ({ index, jobId: null, jobName: null, tasks: new Set<string>() }));
    this.taskmanagers.set(e.tm_id, { id: e.tm_id, host: e.host, pid: e.pid, lost: false, slots });
    this.log(e, `TaskManager ${short(e.tm_id)} registered with ${e.slots} slots`);
  }

  private onTaskManagerLost(e: IClusterEvent): void {
    const tm = this.taskmanagers.get(e.tm_id);
    if (tm) {
      tm.lost = true;
      tm.reason = e.reason;
    }
    this.log(e, `TaskManager ${short(e.tm_id)} lost: ${e.reason}`, 'error');
  }

  private onSlotAllocated(e: IClusterEvent): void {
    const slot = this.slot(e.tm_id, e.slot_index);
    if (slot) {
      slot.jobId = e.job_id;
      slot.jobName = e.job_name;
    }
    this.log(e, `slot ${e.slot_index} of ${short(e.tm_id)} allocated to ${e.job_name}`);
  }

  private onSlotFreed(e: IClusterEvent): void {
    const slot = this.slot(e.tm_id, e.slot_index);
    if (slot && slot.jobId === e.job_id) {
      slot.jobId = null;
      slot.jobName = null;
      slot.tasks.clear();
    }
    this.log(e, `slot ${e.slot_index} of ${short(e.tm_id)} freed`);
  }

  private onJobSubmitted(e: IClusterEvent): void {
    const job = this.newJob(e.job_id, e.name);
    job.startTime = (e.ts || Date.now() / 1000) * 1000;
    this.jobs.set(job.jid, job);
    const link = this._pending.get(e.name);
    if (link) {
      this._pending.delete(e.name);
      this.jobCells.set(job.jid, link);
    }
    void this.loadPlan(job);
  }

  private onJobStatusChanged(e: IClusterEvent): void {
    const job = this.jobs.get(e.job_id) || this.newJob(e.job_id, e.name);
    this.jobs.set(job.jid, job);
    job.state = e.status;
    if (isTerminal(e.status)) {
      job.endTime = (e.ts || Date.now() / 1000) * 1000;
      job.recordsPerS = 0;
    }
    if (e.status === 'FAILED' || e.status === 'FAILING') {
      this.log(e, `job ${job.name} ${e.status}${e.cause ? ': ' + lastLine(e.cause) : ''}`, 'error');
    }
  }

  private onTaskStatusChanged(e: IClusterEvent): void {
    const job = this.jobs.get(e.job_id);
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

  private onTaskMetricsReported(e: IClusterEvent): void {
    const job = this.jobs.get(e.job_id);
    const sub = job?.subtasks.get(`${e.vertex_id}/${e.subtask_index}`);
    if (!job || !sub) {
      return;
    }
    sub.metrics = e.metrics || {};
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

  private onJobRestarting(e: IClusterEvent): void {
    const job = this.jobs.get(e.job_id);
    if (job) {
      job.restarts = Math.max(job.restarts, e.attempt);
    }
    this.log(e, `job ${job?.name || short(e.job_id)} restarting (attempt ${e.attempt}) in ${e.delay_s} s: ${lastLine(e.cause)}`, 'warn');
  }

  private onCheckpointTriggered(e: IClusterEvent): void {
    this.checkpoint(e, { status: 'IN_PROGRESS' });
  }

  private onCheckpointCompleted(e: IClusterEvent): void {
    this.checkpoint(e, { status: 'COMPLETED', durationS: e.duration_s, stateSize: e.state_size, path: e.external_path });
  }

  private onCheckpointFailed(e: IClusterEvent): void {
    this.checkpoint(e, { status: 'FAILED', reason: e.reason });
  }

  private onCheckpointRestored(e: IClusterEvent): void {
    this.log(e, `job ${short(e.job_id)} restored from checkpoint ${e.checkpoint_id}`, 'warn');
  }

  private onLeaderChanged(e: IClusterEvent): void {
    this.jobmanagers = e.jobmanagers && e.jobmanagers.length ? e.jobmanagers : [{ url: e.leader_url, role: 'leader' }];
    this.log(e, `JobManager leader is now ${e.leader_url}`, 'warn');
  }

  private checkpoint(e: IClusterEvent, update: Partial<ICheckpoint>): void {
    const job = this.jobs.get(e.job_id);
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
    return this.taskmanagers.get(tmId)?.slots[index];
  }

  private log(e: IClusterEvent, text: string, kind: IActivity['kind'] = 'info'): void {
    this.activity.unshift({ ts: (e.ts || Date.now() / 1000) * 1000, text, kind });
    this.activity.length = Math.min(this.activity.length, MAX_ACTIVITY);
  }

  emit(): void {
    if (!this._disposed) {
      this._changed.emit();
    }
  }

  private readonly _handlers: Record<string, (e: IClusterEvent) => void> = {
    TaskManagerRegistered: e => this.onTaskManagerRegistered(e),
    TaskManagerLost: e => this.onTaskManagerLost(e),
    ResourceProviderDecision: e => ((line) => this.log(e, line.text, line.kind))(applyProviderDecision(this.taskmanagers, e)),
    SlotAllocated: e => this.onSlotAllocated(e),
    SlotFreed: e => this.onSlotFreed(e),
    JobSubmitted: e => this.onJobSubmitted(e),
    JobStatusChanged: e => this.onJobStatusChanged(e),
    TaskStatusChanged: e => this.onTaskStatusChanged(e),
    TaskMetricsReported: e => this.onTaskMetricsReported(e),
    JobRestarting: e => this.onJobRestarting(e),
    CheckpointTriggered: e => this.onCheckpointTriggered(e),
    CheckpointCompleted: e => this.onCheckpointCompleted(e),
    CheckpointFailed: e => this.onCheckpointFailed(e),
    CheckpointRestored: e => this.onCheckpointRestored(e),
    LeaderChanged: e => this.onLeaderChanged(e)
  };
  private _changed = new Signal<this, void>(this);
  private _socket: WebSocket | null = null;
  private _retryTimer = 0;
  private _failures = 0;
  private _disposed = false;
  private _pending = new Map<string, ICellLink>();
}
