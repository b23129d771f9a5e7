/**
 * ClusterModel: what the panel knows about the cluster, kept current from the JobManager's event
 * stream (forwarded by the server extension). The stream starts with a ClusterSnapshot and then
 * sends every change, so the panel never polls the cluster; only a job's detail view fetches REST
 * views, for fields that no event carries (the task graph, exception traces).
 *
 * Which cluster that is follows the notebook in focus (target.ts): its kernel's cluster, switched when
 * the focus moves or the kernel starts, stops or restarts one. A cluster that stopped is shown as
 * stopped, with nothing of it left behind, rather than retried on its dead port.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { ClusterEvent } from './events';
import { ClusterEventFolder } from './modelEvents';
import { ApiError, eventsUrl, jobManagerAPI, requestAPI, Scope } from './request';
import { ITarget, resolveTarget, sameJobManager, sameTarget } from './target';
import {
  IActivity,
  ICellLink,
  IClusterSnapshot,
  IConnectionInfo,
  IJobManagerInfo,
  IJobState,
  INotebookFocus,
  IProxyError,
  ITaskManagerState
} from './types';

export { isTerminal } from './modelEvents';
export { lastLine, short } from './format';
export type { IActivity, ICellLink, IJobState, ISlotState, ISubtaskState, ITaskManagerState } from './types';

/** How the panel's view of the cluster stands. */
export type LinkState = 'connecting' | 'live' | 'unreachable' | 'stopped' | 'not-configured';

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
  /** Follow the notebook in focus (the default), or stay with the JobManager connected by hand. */
  follow = true;
  notebook: INotebookFocus | null = null;
  /** Where calls for the cluster shown go (request.ts); kept with the connection it belongs to. */
  scope: Scope = '';
  faultInjection = false;
  jobmanagers: IJobManagerInfo[] = [];
  taskmanagers = new Map<string, ITaskManagerState>();
  jobs = new Map<string, IJobState>();
  activity: IActivity[] = [];
  jobCells = new Map<string, ICellLink>();
  lastEventAt = 0;

  /** Find the cluster to show and open its event stream; the snapshot it starts with replaces what the
   * panel knew. A call made while an earlier one still waits wins: the earlier one gives up. */
  async connect(): Promise<void> {
    const generation = ++this._generation;
    this.closeSocket();
    window.clearTimeout(this._retryTimer);
    this.link = 'connecting';
    this.emit();
    let target: ITarget;
    try {
      target = await this.resolve();
    } catch (error) {
      if (generation === this._generation) {
        this.setUnreachable(String((error as Error).message));
      }
      return;
    }
    if (generation !== this._generation) {
      return;
    }
    this.adopt(target);
    if (this.link === 'connecting') {
      this.openStream();
    }
  }

  /** The notebook in focus changed (or its kernel did): show its cluster. */
  showNotebook(focus: INotebookFocus | null): void {
    const moved = (focus?.kernelId || null) !== (this.notebook?.kernelId || null);
    this.notebook = focus;
    if (moved && this.follow) {
      void this.connect();
    } else {
      this.emit();
    }
  }

  /** The notebook's kernel ran something or restarted: reconnect if its cluster is another one now. The
   * same JobManager reached another way (the kernel connected to the one the panel showed) keeps its stream. */
  async recheck(): Promise<void> {
    const generation = this._generation;
    try {
      const now = await this.resolve();
      if (generation !== this._generation || sameTarget(now, this.target())) {
        return;
      }
      if (this.link === 'live' && sameJobManager(now, this.target())) {
        this.scope = now.scope;
        this.connection = now.info;
        this.emit();
      } else {
        await this.connect();
      }
    } catch {
      // the next stream event or retry tells
    }
  }

  /** Point the server extension at another JobManager by hand: the panel stays with it. */
  async useJobManager(url: string, tokenFile: string): Promise<void> {
    this.connection = await requestAPI<IConnectionInfo>('connection', {
      method: 'POST',
      body: JSON.stringify({ url, token_file: tokenFile })
    });
    this.follow = false;
    await this.connect();
  }

  /** Leave the JobManager connected by hand and follow the notebook in focus again. */
  async followNotebooks(): Promise<void> {
    await requestAPI<IConnectionInfo>('connection', { method: 'POST', body: JSON.stringify({ url: '' }) });
    this.follow = true;
    await this.connect();
  }

  private resolve(): Promise<ITarget> {
    return resolveTarget(this.follow ? this.notebook?.kernelId || null : null);
  }

  private target(): ITarget | null {
    return this.connection ? { scope: this.scope, info: this.connection } : null;
  }

  /** Take the target the server named; another cluster than before starts from a clean slate. */
  private adopt(target: ITarget): void {
    if (!sameTarget(target, this.target())) {
      this.clearCluster();
    }
    this.scope = target.scope;
    this.connection = target.info;
    this.error = target.info.reason || '';
    if (target.info.state === 'stopped') {
      this.link = 'stopped';
    } else if (!target.info.configured) {
      this.link = 'not-configured';
    }
    this.emit();
  }

  private clearCluster(): void {
    this.jobmanagers = [];
    this.taskmanagers = new Map();
    this.jobs = new Map();
    this.activity = [];
    this.faultInjection = false;
    this.lastEventAt = 0;
  }

  private openStream(): void {
    const socket = new WebSocket(eventsUrl(this.scope));
    this._socket = socket;
    socket.onmessage = msg => this.onMessage(socket, msg.data);
    socket.onclose = event => {
      if (socket === this._socket) {
        this._socket = null;
        void this.streamLost(`event stream closed (${event.code}${event.reason ? ': ' + event.reason : ''})`);
      }
    };
  }

  /** The stream ended: a cluster that stopped (or moved) is shown as it is now; the same one is retried. */
  private async streamLost(message: string): Promise<void> {
    const generation = this._generation;
    let now: ITarget | null = null;
    try {
      now = await this.resolve();
    } catch {
      now = null;
    }
    if (generation !== this._generation) {
      return;
    }
    if (now && (!now.info.configured || now.info.state === 'stopped' || !sameTarget(now, this.target()))) {
      await this.connect();
    } else {
      this.setUnreachable(message);
    }
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
    ++this._generation; // a connect() still waiting gives up: this state stands until the retry
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
      this.closeSocket();
      void this.streamLost(String(event.message));
      return;
    }
    this.lastEventAt = Date.now();
    if (event.type === 'ClusterSnapshot') {
      this._failures = 0;
      this.link = 'live';
      this.error = '';
      this._folder.applySnapshot(event);
      void this.loadFeatures();
    } else {
      this.apply(event);
    }
    this.emit();
  }

  private async loadFeatures(): Promise<void> {
    try {
      const config = await jobManagerAPI<{ features?: { 'fault-injection'?: boolean } }>(this.scope, 'config');
      this.faultInjection = !!config.features?.['fault-injection'];
      this.emit();
    } catch {
      this.faultInjection = false;
    }
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
        this.scope, `jobs/${job.jid}`
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
  private _generation = 0;
  private _disposed = false;
  private _pending = new Map<string, ICellLink>();
}
