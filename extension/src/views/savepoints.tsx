/**
 * The savepoint browser in the panel: every savepoint and retained checkpoint under the cluster's
 * directories (`GET /savepoints`), one of them opened with each operator's state and keys
 * (`/savepoints/details`), a check against a running or archived job's graph
 * (`/savepoints/compatibility`), and its actions: resume the job that took it, or dispose of it
 * (commands, which ask first). Read from REST when opened or refreshed, not live.
 */
import React, { useEffect, useState } from 'react';

import { CommandIDs } from '../commands';
import { bytes, clock } from '../format';
import { ClusterModel } from '../model';
import { jobManagerAPI } from '../request';
import { ICompatibility, ISavepoint, ISavepointList } from '../types';

interface IProps {
  model: ClusterModel;
  run: (command: string, args?: Record<string, string>) => void;
}

function StateTable({ entry }: { entry: ISavepoint }): JSX.Element {
  return (
    <table className="jp-Flinkbench-table" data-name="savepoint-state">
      <thead><tr><th>operator</th><th>state</th><th>subtasks</th><th>bytes</th><th>rows</th><th>keys</th></tr></thead>
      <tbody>
        {entry.state.map(o => (
          <tr key={o.operator} data-operator={o.operator}>
            <td>{o.operator}</td><td>{o.kinds.join(', ')}</td><td>{o.subtasks}</td><td>{bytes(o.bytes)}</td>
            <td>{o.rows ?? '-'}</td><td data-field="keys">{o.keys ?? '-'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Fit({ fit }: { fit: ICompatibility }): JSX.Element {
  return (
    <div className="jp-Flinkbench-fit" data-compatible={String(fit.compatible)}>
      <b>{fit.compatible ? 'Fits: the job can start from it' : 'Refused as submitted'}</b>
      <div>restored: {fit.matched.join(', ') || '-'}</div>
      <div>dropped (needs allowNonRestoredState): {fit.dropped.join(', ') || '-'}</div>
      <div>start empty: {fit.new.join(', ') || '-'}</div>
      {fit.problems.map(p => <div key={p} className="jp-Flinkbench-error">{p}</div>)}
    </div>
  );
}

function Details({ model, entry, run }: { model: ClusterModel; entry: ISavepoint; run: IProps['run'] }): JSX.Element {
  const [details, setDetails] = useState<ISavepoint | null>(null);
  const [jobId, setJobId] = useState(entry['job-id']);
  const [allow, setAllow] = useState(false);
  const [fit, setFit] = useState<ICompatibility | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    jobManagerAPI<ISavepoint>(model.scope, `savepoints/details?path=${encodeURIComponent(entry.path)}`)
      .then(setDetails)
      .catch(e => setError(String(e.message)));
  }, [model.scope, entry.path]);
  const check = () => {
    setFit(null);
    jobManagerAPI<ICompatibility>(model.scope, 'savepoints/compatibility', 'POST', { path: entry.path, job_id: jobId, allowNonRestoredState: allow })
      .then(setFit)
      .catch(e => setError(String(e.message)));
  };
  const shown = details || entry;
  return (
    <div className="jp-Flinkbench-savepointDetail" data-path={entry.path}>
      <StateTable entry={shown} />
      <div className="jp-Flinkbench-actions">
        <select value={jobId} onChange={e => setJobId(e.target.value)} data-name="check-job">
          {Array.from(model.jobs.values()).map(j => <option key={j.jid} value={j.jid}>{j.name} ({j.state})</option>)}
        </select>
        <label><input type="checkbox" checked={allow} onChange={e => setAllow(e.target.checked)} /> allow non-restored state</label>
        <button className="jp-Flinkbench-button" data-action="check" onClick={check}>Check</button>
        <button className="jp-Flinkbench-button" data-action="resume" onClick={() => run(CommandIDs.resumeSavepoint, { path: entry.path, allow: String(allow) })}>Resume its job</button>
        <button className="jp-Flinkbench-button jp-mod-danger" data-action="dispose" onClick={() => run(CommandIDs.disposeSavepoint, { path: entry.path })}>Dispose</button>
      </div>
      {fit && <Fit fit={fit} />}
      {error && <div className="jp-Flinkbench-error">{error}</div>}
    </div>
  );
}

export function SavepointsView({ model, run }: IProps): JSX.Element {
  const [list, setList] = useState<ISavepointList | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState('');
  const refresh = () => {
    setError('');
    jobManagerAPI<ISavepointList>(model.scope, 'savepoints').then(setList).catch(e => setError(String(e.message)));
  };
  useEffect(refresh, []);
  return (
    <section className="jp-Flinkbench-section jp-Flinkbench-savepoints">
      <h3>
        Savepoints <span className="jp-Flinkbench-muted">{list ? list.savepoints.length : '…'}</span>
        <button className="jp-Flinkbench-link" data-action="refresh-savepoints" onClick={refresh}>refresh</button>
      </h3>
      {error && <div className="jp-Flinkbench-error">{error}</div>}
      {list && list.savepoints.length === 0 && <p className="jp-Flinkbench-muted">None under {list.directories.join(', ')}</p>}
      {list && list.savepoints.map(s => (
        <div key={s.path} className="jp-Flinkbench-savepoint" data-path={s.path} data-kind={s.kind}>
          <div className="jp-Flinkbench-jobHead" onClick={() => setOpen(open === s.path ? null : s.path)} title={s.path}>
            <span className="jp-Flinkbench-jobName">{s.kind} {s.id} of {s['job-name'] || s['job-id'].slice(0, 8)}</span>
            <span className="jp-Flinkbench-muted">{clock(s.timestamp)} · P{s.parallelism} · {bytes(s.size)}</span>
          </div>
          {open === s.path && <Details model={model} entry={s} run={run} />}
        </div>
      ))}
    </section>
  );
}
