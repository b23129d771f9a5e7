/**
 * Shapes of what the JobManager sends (REST views and event-stream messages), as far as the panel
 * reads them. Field names are the JobManager's own, which follow Flink's REST API.
 */

export interface IConnectionInfo {
  configured: boolean;
  url: string | null;
  token_file: string | null;
  source: string | null;
  local_cluster: ILocalClusterStatus;
  /** Only for a notebook kernel's cluster (`kernel/<id>/cluster`): running, stopped or none, and why. */
  state?: 'running' | 'stopped' | 'none';
  reason?: string;
}

/** The notebook in focus, whose kernel's cluster the panel shows. */
export interface INotebookFocus {
  name: string;
  kernelId: string | null;
}

export interface ILocalClusterStatus {
  state: 'stopped' | 'starting' | 'running' | 'stopping' | 'failed';
  error: string | null;
  url: string | null;
  taskmanagers?: number;
  slots?: number;
  fault_injection?: boolean;
}

export interface IJobManagerInfo {
  url: string;
  role: 'leader' | 'standby' | string;
  pid?: number;
}

export interface ISlotInfo {
  index: number;
  'allocation-id'?: string | null;
  'job-id'?: string | null;
  'job-name'?: string | null;
  tasks?: string[];
}

export interface ITaskManagerInfo {
  id: string;
  host: string;
  pid?: number;
  state: 'REGISTERED' | 'LOST' | string;
  slotsNumber: number;
  reason?: string;
  slots: ISlotInfo[];
}

export interface IJobOverview {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  'end-time': number;
  duration: number;
  parallelism: number;
  restarts: number;
  /** Subtasks per state in Flink's lower-case names (running, finished, ...) plus total. */
  tasks?: Record<string, number>;
  'records-out-per-s'?: number;
}

/** A subtask's counters: Flink's names (read-records, ...) and the JobManager's own beside them. */
export interface ITaskMetrics {
  'read-records'?: number;
  'write-records'?: number;
  'read-bytes'?: number;
  'write-bytes'?: number;
  records_in?: number;
  records_out?: number;
  records_in_per_s?: number;
  records_out_per_s?: number;
  backpressure_ratio?: number;
  watermark?: number | null;
}

export interface ISubtaskDetail {
  subtask: number;
  status: string;
  attempt: number;
  'taskmanager-id': string | null;
  host: string | null;
  slot: number | null;
  metrics: ITaskMetrics | null;
  'failure-cause': string | null;
}

export interface IVertexDetail {
  id: string;
  name: string;
  parallelism: number;
  status: string;
  operators: string[];
  subtasks: ISubtaskDetail[];
}

export interface IPlanNode {
  id: string;
  description: string;
  parallelism: number;
  inputs?: { id: string; ship_strategy: string; keys?: string[] }[];
}

export interface IJobDetail extends IJobOverview {
  vertices: IVertexDetail[];
  plan: { nodes: IPlanNode[]; statement?: string | null };
}

export interface IExceptionEntry {
  exceptionName?: string;
  stacktrace: string;
  timestamp: number;
  taskName?: string | null;
  location?: string | null;
}

export interface IExceptionsView {
  'root-exception': string | null;
  exceptionHistory?: { entries: IExceptionEntry[] };
}

/** One checkpoint as the panel keeps it, from events or from Flink's checkpoint history. */
export interface ICheckpoint {
  id: number;
  status: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  isSavepoint: boolean;
  triggeredAt: number;
  durationS?: number;
  stateSize?: number;
  path?: string;
  reason?: string;
}

/** The first message on the event stream: the whole cluster as REST would show it then. */
export interface IClusterSnapshot {
  type: 'ClusterSnapshot';
  seq?: number;
  ts?: number;
  jobmanagers?: IJobManagerInfo[];
  taskmanagers?: ITaskManagerInfo[];
  jobs?: IJobOverview[];
  'resource-provider'?: Record<string, any>;
}

/** What the server extension sends instead when it cannot reach the JobManager's stream. */
export interface IProxyError {
  type: 'ProxyError';
  message: string;
}

// -- what the panel keeps (ClusterModel's state), built from the snapshot and the events ------------

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

/** One operator's state in a savepoint (`/savepoints`; rows and keys from `/savepoints/details`). */
export interface IOperatorState {
  operator: string;
  kinds: string[];
  subtasks: number;
  bytes: number;
  rows?: number;
  keys?: number;
}

/** A savepoint or retained checkpoint as the savepoint browser lists it. */
export interface ISavepoint {
  path: string;
  kind: string;
  id: number;
  'job-id': string;
  'job-name': string | null;
  timestamp: number;
  parallelism: number;
  size: number;
  state: IOperatorState[];
}

export interface ISavepointList {
  directories: string[];
  savepoints: ISavepoint[];
}

/** How a savepoint fits a job (`POST /savepoints/compatibility`). */
export interface ICompatibility {
  path: string;
  compatible: boolean;
  needsAllowNonRestoredState: boolean;
  matched: string[];
  dropped: string[];
  new: string[];
  problems: string[];
}
