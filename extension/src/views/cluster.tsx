/** The cluster view: JobManagers (leader/standby), TaskManagers with their slot grids, recent activity. */
import React from 'react';

import { CommandIDs } from '../commands';
import { clock, jobColor, short } from '../format';
import { ClusterModel, ITaskManagerState } from '../model';

interface IProps {
  model: ClusterModel;
  run: (command: string, args?: Record<string, string>) => void;
}

function SlotGrid({ tm }: { tm: ITaskManagerState }): JSX.Element {
  return (
    <div className="jp-Flinkbench-slots">
      {tm.slots.map(slot => {
        const state = tm.lost ? 'lost' : tm.starting ? 'starting' : slot.jobId ? 'busy' : 'free';
        const tasks = Array.from(slot.tasks).join(', ');
        const title = state === 'busy' ? `slot ${slot.index}: ${slot.jobName}${tasks ? ' — ' + tasks : ''}` : `slot ${slot.index}: ${state}`;
        return (
          <div
            key={slot.index}
            className={`jp-Flinkbench-slot jp-mod-${state}`}
            data-slot={slot.index}
            data-state={state}
            data-job-id={slot.jobId || undefined}
            title={title}
            style={state === 'busy' && slot.jobId ? { background: jobColor(slot.jobId) } : undefined}
          >
            <span className="jp-Flinkbench-slotIndex">{slot.index}</span>
            {state === 'busy' && <span className="jp-Flinkbench-slotJob">{slot.jobName}</span>}
            {(state === 'lost' || state === 'starting') && <span className="jp-Flinkbench-slotJob">{state}</span>}
          </div>
        );
      })}
      {tm.slots.length === 0 && <span className="jp-Flinkbench-muted">no slots known</span>}
    </div>
  );
}

export function ClusterView({ model, run }: IProps): JSX.Element {
  const tms = Array.from(model.taskmanagers.values()).sort((a, b) => Number(a.lost) - Number(b.lost) || a.id.localeCompare(b.id));
  const up = (tm: ITaskManagerState): boolean => !tm.lost && !tm.starting;
  const free = tms.reduce((n, tm) => n + (up(tm) ? tm.slots.filter(s => !s.jobId).length : 0), 0);
  const total = tms.reduce((n, tm) => n + (up(tm) ? tm.slots.length : 0), 0);
  return (
    <section className="jp-Flinkbench-section jp-Flinkbench-cluster">
      <h3>Cluster <span className="jp-Flinkbench-muted">{free} of {total} slots free</span></h3>
      <ul className="jp-Flinkbench-jobmanagers">
        {model.jobmanagers.map(jm => (
          <li key={jm.url} data-role={jm.role}>
            <span className={`jp-Flinkbench-badge jp-mod-${jm.role}`}>{jm.role}</span> JobManager {jm.url}
            {jm.pid ? <span className="jp-Flinkbench-muted"> pid {jm.pid}</span> : null}
            {jm.role === 'leader' && model.faultInjection && (
              <button className="jp-Flinkbench-button jp-mod-danger" onClick={() => run(CommandIDs.killLeader)}>kill</button>
            )}
          </li>
        ))}
      </ul>
      {tms.map(tm => (
        <div key={tm.id} className={`jp-Flinkbench-tm${tm.lost ? ' jp-mod-lost' : ''}`} data-tm-id={tm.id} data-state={tm.lost ? 'LOST' : tm.starting ? 'STARTING' : 'REGISTERED'}>
          <div className="jp-Flinkbench-tmHeader">
            <span className={`jp-Flinkbench-badge jp-mod-${tm.lost ? 'lost' : tm.starting ? 'starting' : 'ok'}`}>{tm.lost ? 'LOST' : tm.starting ? 'starting' : 'up'}</span>
            <span title={tm.id}>TaskManager {short(tm.id)}</span>
            <span className="jp-Flinkbench-muted">{tm.host}{tm.pid ? ` pid ${tm.pid}` : ''}</span>
            {up(tm) && model.faultInjection && (
              <button className="jp-Flinkbench-button jp-mod-danger" title="Kill this TaskManager (fault injection)" onClick={() => run(CommandIDs.killTaskManager, { tmId: tm.id })}>kill</button>
            )}
          </div>
          {(tm.lost || tm.starting) && tm.reason && <div className="jp-Flinkbench-muted">{tm.reason}</div>}
          <SlotGrid tm={tm} />
        </div>
      ))}
      {tms.length === 0 && <p className="jp-Flinkbench-muted">No TaskManager has registered yet.</p>}
      {model.activity.length > 0 && (
        <details className="jp-Flinkbench-activity">
          <summary>ResourceManager, resource provider and failover activity ({model.activity.length})</summary>
          <ul>
            {model.activity.map((a, i) => (
              <li key={i} className={`jp-mod-${a.kind}`}><span className="jp-Flinkbench-muted">{clock(a.ts)}</span> {a.text}</li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
