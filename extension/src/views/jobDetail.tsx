/**
 * One job in depth: its task graph, every subtask with its TaskManager and slot, backpressure and
 * watermarks, exceptions and checkpoint history. The structure comes from REST (refetched when the
 * job or one of its tasks changes state); subtask figures are overlaid live from the event stream.
 */
import React, { useEffect, useState } from 'react';

import { CommandIDs } from '../commands';
import { backpressure, bytes, clock, count, duration, lastLine, rate, short, watermark } from '../format';
import { ClusterModel, IJobState, isTerminal } from '../model';
import { jobManagerAPI } from '../request';
import { ICheckpoint, IExceptionsView, IJobDetail } from '../types';
import { JobGraphView } from './graph';
import { jobDuration } from './jobs';

interface IProps {
  model: ClusterModel;
  job: IJobState;
  close: () => void;
  run: (command: string, args?: Record<string, string>) => void;
}

interface IRestViews {
  detail: IJobDetail | null;
  exceptions: IExceptionsView | null;
  checkpoints: ICheckpoint[];
  checkpointError: string;
  error: string;
}

/** Flink's `/jobs/<id>/checkpoints` history, read leniently (fields may be absent on older runtimes). */
function parseCheckpoints(data: any): ICheckpoint[] {
  return ((data && data.history) || []).map((c: any) => ({
    id: c.id, status: c.status, isSavepoint: !!(c.is_savepoint ?? c.savepoint), triggeredAt: c.trigger_timestamp || 0,
    durationS: c.end_to_end_duration !== undefined ? c.end_to_end_duration / 1000 : undefined,
    stateSize: c.state_size ?? c.checkpointed_size, path: c.external_path, reason: c.failure_message
  }));
}

function useRestViews(model: ClusterModel, job: IJobState): IRestViews {
  const [views, setViews] = useState<IRestViews>({ detail: null, exceptions: null, checkpoints: [], checkpointError: '', error: '' });
  const taskStates = Array.from(job.subtasks.values()).map(s => s.state).join(',');
  useEffect(() => {
    let live = true;
    const load = async () => {
      const [detail, exceptions, checkpoints] = await Promise.allSettled([
        jobManagerAPI<IJobDetail>(model.scope, `jobs/${job.jid}`),
        jobManagerAPI<IExceptionsView>(model.scope, `jobs/${job.jid}/exceptions`),
        jobManagerAPI<any>(model.scope, `jobs/${job.jid}/checkpoints`)
      ]);
      if (!live) {
        return;
      }
      setViews({
        detail: detail.status === 'fulfilled' ? detail.value : null,
        exceptions: exceptions.status === 'fulfilled' ? exceptions.value : null,
        checkpoints: checkpoints.status === 'fulfilled' ? parseCheckpoints(checkpoints.value) : [],
        checkpointError: checkpoints.status === 'rejected' ? String(checkpoints.reason.message) : '',
        error: detail.status === 'rejected' ? String(detail.reason.message) : ''
      });
    };
    void load();
    return () => {
      live = false;
    };
  }, [model.scope, job.jid, job.state, job.restarts, taskStates]);
  return views;
}

function TaskGraph({ detail }: { detail: IJobDetail }): JSX.Element {
  const names = new Map(detail.plan.nodes.map(n => [n.id, n.description]));
  return (
    <ol className="jp-Flinkbench-graph">
      {detail.plan.nodes.map(node => (
        <li key={node.id}>
          <b>{node.description}</b> ×{node.parallelism}
          {(node.inputs || []).map(input => (
            <div key={input.id} className="jp-Flinkbench-muted">
              ← {input.ship_strategy}{input.keys && input.keys.length ? ` by ${input.keys.join(', ')}` : ''} from {names.get(input.id) || short(input.id)}
            </div>
          ))}
        </li>
      ))}
    </ol>
  );
}

function Subtasks({ detail, job }: { detail: IJobDetail; job: IJobState }): JSX.Element {
  return (
    <>
      {detail.vertices.map(vertex => (
        <div key={vertex.id} className="jp-Flinkbench-vertex">
          <div className="jp-Flinkbench-vertexName">{vertex.name} <span className="jp-Flinkbench-muted">{vertex.status}</span></div>
          <table className="jp-Flinkbench-table jp-Flinkbench-subtasks">
            <thead>
              <tr><th>#</th><th>State</th><th>TaskManager</th><th>Slot</th><th>In</th><th>Out</th><th>Rate</th><th>Backpressure</th><th>Watermark</th></tr>
            </thead>
            <tbody>
              {vertex.subtasks.map(sub => {
                const live = job.subtasks.get(`${vertex.id}/${sub.subtask}`);
                const m = live?.metrics && Object.keys(live.metrics).length ? live.metrics : sub.metrics || {};
                const bp = backpressure(m.backpressure_ratio);
                const tm = live?.tmId ?? sub['taskmanager-id'];
                return (
                  <tr key={sub.subtask}>
                    <td>{sub.subtask + 1}</td>
                    <td><span className={`jp-Flinkbench-state jp-mod-${(live?.state || sub.status).toLowerCase()}`}>{live?.state || sub.status}</span></td>
                    <td title={tm || ''}>{short(tm)}</td>
                    <td>{live?.slot ?? sub.slot ?? '-'}</td>
                    <td>{count(m.records_in)}</td>
                    <td>{count(m.records_out)}</td>
                    <td>{rate(m.records_out_per_s)}</td>
                    <td><span className={`jp-Flinkbench-bp jp-mod-${bp.level}`}>{bp.text}</span></td>
                    <td>{watermark(m.watermark)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ))}
    </>
  );
}

function Checkpoints({ job, rest, error }: { job: IJobState; rest: ICheckpoint[]; error: string }): JSX.Element {
  const byKey = new Map<string, ICheckpoint>();
  for (const c of [...rest, ...job.checkpoints]) {
    byKey.set(`${c.isSavepoint ? 's' : 'c'}${c.id}`, { ...byKey.get(`${c.isSavepoint ? 's' : 'c'}${c.id}`), ...c });
  }
  const all = Array.from(byKey.values()).sort((a, b) => b.triggeredAt - a.triggeredAt || b.id - a.id);
  if (!all.length) {
    return <p className="jp-Flinkbench-muted">{error ? `Checkpoint history unavailable: ${error}` : 'No checkpoints yet.'}</p>;
  }
  return (
    <div className="jp-Flinkbench-scroll">
      <table className="jp-Flinkbench-table jp-Flinkbench-checkpoints">
        <thead><tr><th>ID</th><th>Kind</th><th>Status</th><th>Triggered</th><th>Duration</th><th>Size</th></tr></thead>
        <tbody>
          {all.map(c => (
            <tr key={`${c.isSavepoint}-${c.id}`} title={c.path || c.reason || ''} data-kind={c.isSavepoint ? 'savepoint' : 'checkpoint'} data-status={c.status}>
              <td>{c.id}</td><td>{c.isSavepoint ? 'savepoint' : 'checkpoint'}</td>
              <td><span className={`jp-Flinkbench-state jp-mod-${c.status.toLowerCase()}`}>{c.status}</span></td>
              <td>{clock(c.triggeredAt)}</td>
              <td>{c.durationS !== undefined ? `${c.durationS.toFixed(2)} s` : '-'}</td>
              <td>{c.stateSize !== undefined ? bytes(c.stateSize) : '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The SQL a job was planned from (`%%flink sql`, `execute_sql`), when it has one. */
function Statement({ text }: { text?: string | null }): JSX.Element | null {
  return text ? (
    <>
      <h4>Statement</h4>
      <pre className="jp-Flinkbench-statement">{text}</pre>
    </>
  ) : null;
}

function JobHeader({ job, close, run }: Omit<IProps, 'model'>): JSX.Element {
  return (
    <h3>
      <span className="jp-Flinkbench-jobName" title={job.name}>{job.name}</span>
      <span className={`jp-Flinkbench-state jp-mod-${job.state.toLowerCase()}`}>{job.state}</span>
      <button className="jp-Flinkbench-link" data-action="dashboard" title="This job in the JobManager's web dashboard, in a new tab"
        onClick={() => run(CommandIDs.openDashboard, { jobId: job.jid })}>dashboard</button>
      <button className="jp-Flinkbench-button" onClick={close} title="Close the detail">×</button>
    </h3>
  );
}

export function JobDetailView({ model, job, close, run }: IProps): JSX.Element {
  const views = useRestViews(model, job);
  const running = !isTerminal(job.state) && job.state !== 'CANCELLING';
  const entries = views.exceptions?.exceptionHistory?.entries || [];
  return (
    <section className="jp-Flinkbench-section jp-Flinkbench-jobDetail" data-job-id={job.jid}>
      <JobHeader job={job} close={close} run={run} />
      <div className="jp-Flinkbench-muted">
        {job.jid} · {duration(jobDuration(job))} · parallelism {job.parallelism || '-'} · {job.restarts} restarts
      </div>
      {running && (
        <div className="jp-Flinkbench-actions">
          <button className="jp-Flinkbench-button" onClick={() => run(CommandIDs.savepoint, { jobId: job.jid })}>Savepoint</button>
          <button className="jp-Flinkbench-button" onClick={() => run(CommandIDs.stopWithSavepoint, { jobId: job.jid })}>Stop with savepoint</button>
          <button className="jp-Flinkbench-button jp-mod-danger" onClick={() => run(CommandIDs.cancelJob, { jobId: job.jid })}>Cancel</button>
        </div>
      )}
      {views.error && <p className="jp-Flinkbench-error">{views.error}</p>}
      <Statement text={views.detail?.plan.statement} />
      <h4>Job graph</h4>
      <JobGraphView scope={model.scope} jid={job.jid} refreshMs={model.refreshMs} />
      {views.detail && (
        <>
          <h4>Tasks</h4>
          <TaskGraph detail={views.detail} />
          <h4>Subtasks</h4>
          <Subtasks detail={views.detail} job={job} />
        </>
      )}
      <h4>Checkpoints</h4>
      <Checkpoints job={job} rest={views.checkpoints} error={views.checkpointError} />
      <h4>Exceptions</h4>
      {entries.length === 0 ? (
        <p className="jp-Flinkbench-muted">None.</p>
      ) : (
        entries.map((entry, i) => (
          <details key={i} className="jp-Flinkbench-exception">
            <summary>{clock(entry.timestamp)} {entry.taskName ? `${entry.taskName}: ` : ''}{lastLine(entry.stacktrace)}</summary>
            <pre>{entry.stacktrace}</pre>
          </details>
        ))
      )}
    </section>
  );
}
