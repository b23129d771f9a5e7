/**
 * ClusterModel: what the panel knows about the cluster, kept current from the JobManager's event
 * stream (forwarded by the server extension). The stream starts with a ClusterSnapshot and then
 * sends every change, so the panel never polls the cluster; only a job's detail view fetches REST
 * views, for fields that no event carries (the task graph, exception traces).
 */
import { ISignal, Signal } from '@lumino/signaling';

import { ClusterEvent } from './events';
import { ClusterEventFolder } from './modelEvents';
import { addStartingFromSnapshot } from './provider';
import { ApiError, eventsUrl, jobManagerAPI, requestAPI } from './request';
import {
  IActivity,
  ICellLink,
  IClusterSnapshot,
  IConnectionInfo,
  IJobManagerInfo,
  IJobState,
  IProxyError,
  ITaskManagerState
} from './types';

export { isTerminal } from './modelEvents';
export { lastLine, short } from './format';
export type { IActivity, ICellLink, IJobState, ISlotState, ISubtaskState, ITaskManagerState } from './types';

/** How the panel's view of the cluster stands. */
export type LinkState = 'connecting' | 'live' | 'unreachable' | 'not-configured';

const MAX_ACTIVITY = 30;
const MAX_RECONNECT_DELAY_MS = 10000;

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
    let event: ClusterEvent | IClusterSnapshot | IProxyError;
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

  private applySnapshot(snapshot: IClusterSnapshot): void {
    this.jobmanagers = snapshot.jobmanagers || [];
    const previous = this.taskmanagers;
    this.taskmanagers = new Map();
    for (const tm of snapshot.taskmanagers || []) {
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
    for (const overview of snapshot.jobs || []) {
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

  /** A job the panel has just heard of, before any of its tasks. */
  newJob(jid: string, name: string): IJobState {
    return {
      jid, name, state: 'INITIALIZING', startTime: Date.now(), endTime: -1, parallelism: 0, restarts: 0,
      recordsPerS: 0, subtasks: new Map(), sinkVertices: null, checkpoints: []
    };
  }

  /** Learn a job's sink tasks from its plan (their output rate is the job's rate). */
  async loadPlan(job: IJobState): Promise<void> {
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
  apply(event: ClusterEvent): void {
    this._folder.apply(event);
  }

  takeSubmission(jobName: string): ICellLink | undefined {
    const link = this._pending.get(jobName);
    this._pending.delete(jobName);
    return link;
  }

  /** Add a line to the cluster's recent activity. */
  log(e: { ts?: number }, text: string, kind: IActivity['kind'] = 'info'): void {
    this.activity.unshift({ ts: (e.ts || Date.now() / 1000) * 1000, text, kind });
    this.activity.length = Math.min(this.activity.length, MAX_ACTIVITY);
  }

  emit(): void {
    if (!this._disposed) {
      this._changed.emit();
    }
  }

  private readonly _folder = new ClusterEventFolder(this);
  private _changed = new Signal<this, void>(this);
  private _socket: WebSocket | null = null;
  private _retryTimer = 0;
  private _failures = 0;
  private _disposed = false;
  private _pending = new Map<string, ICellLink>();
}
