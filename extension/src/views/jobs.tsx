/** The jobs table: one row per job with its live figures; a click opens the job's detail. */
import React from 'react';

import { CommandIDs } from '../commands';
import { duration, rate } from '../format';
import { ClusterModel, IJobState, isTerminal } from '../model';

interface IProps {
  model: ClusterModel;
  selected: string | null;
  select: (jid: string | null) => void;
  run: (command: string, args?: Record<string, string>) => void;
}

export function lastCheckpoint(job: IJobState): string {
  const done = job.checkpoints.find(c => c.status === 'COMPLETED');
  return done ? `#${done.id}${done.isSavepoint ? ' (savepoint)' : ''}` : job.checkpoints.length ? job.checkpoints[0].status.toLowerCase() : '-';
}

export function jobDuration(job: IJobState): number {
  return (job.endTime > 0 ? job.endTime : Date.now()) - job.startTime;
}

export function JobsView({ model, selected, select, run }: IProps): JSX.Element {
  const jobs = Array.from(model.jobs.values()).sort((a, b) => Number(isTerminal(a.state)) - Number(isTerminal(b.state)) || b.startTime - a.startTime);
  return (
    <section className="jp-Flinkbench-section jp-Flinkbench-jobs">
      <h3>Jobs <span className="jp-Flinkbench-muted">{jobs.filter(j => !isTerminal(j.state)).length} running</span></h3>
      {jobs.length === 0 && (
        <p className="jp-Flinkbench-muted">No jobs yet. Submit a notebook cell with the toolbar's "Submit job" button.</p>
      )}
      {jobs.map(job => {
        const live = !isTerminal(job.state);
        return (
          <div
            key={job.jid}
            data-job-id={job.jid}
            data-job-name={job.name}
            data-state={job.state}
            className={`jp-Flinkbench-job${job.jid === selected ? ' jp-mod-selected' : ''}`}
            title={`${job.name} (${job.jid}): click for details`}
            onClick={() => select(job.jid === selected ? null : job.jid)}
          >
            <div className="jp-Flinkbench-jobHead">
              <span className="jp-Flinkbench-jobName" title={job.name}>{job.name}</span>
              <span className={`jp-Flinkbench-state jp-mod-${job.state.toLowerCase()}`}>{job.state}</span>
              {model.jobCells.has(job.jid) && (
                <button className="jp-Flinkbench-link" title="Show the cell this job came from" onClick={e => { e.stopPropagation(); run(CommandIDs.openCell, { jobId: job.jid }); }}>cell</button>
              )}
              {live && job.state !== 'CANCELLING' && (
                <button className="jp-Flinkbench-button jp-mod-danger" data-action="cancel" onClick={e => { e.stopPropagation(); run(CommandIDs.cancelJob, { jobId: job.jid }); }}>cancel</button>
              )}
            </div>
            <div className="jp-Flinkbench-jobStats">
              <span title="Duration" data-field="duration">{duration(jobDuration(job))}</span>
              <span title="Parallelism" data-field="parallelism">P{job.parallelism || '-'}</span>
              <span title="Records per second leaving the job's last tasks" data-field="rate">{live ? rate(job.recordsPerS) : '-'}</span>
              <span title="Last completed checkpoint" data-field="checkpoint">ckpt {lastCheckpoint(job)}</span>
              <span title="Restarts" data-field="restarts">{job.restarts} restarts</span>
            </div>
          </div>
        );
      })}
    </section>
  );
}
