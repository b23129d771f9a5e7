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
      {jobs.length === 0 ? (
        <p className="jp-Flinkbench-muted">No jobs yet. Submit a notebook cell with the toolbar's "Submit job" button.</p>
      ) : (
        <table className="jp-Flinkbench-table">
          <thead>
            <tr><th>Job</th><th>State</th><th>Duration</th><th>P</th><th>Records</th><th>Checkpoint</th><th>Restarts</th><th /></tr>
          </thead>
          <tbody>
            {jobs.map(job => (
              <tr
                key={job.jid}
                data-job-id={job.jid}
                data-job-name={job.name}
                data-state={job.state}
                className={job.jid === selected ? 'jp-mod-selected' : ''}
                onClick={() => select(job.jid === selected ? null : job.jid)}
              >
                <td title={job.jid}>
                  {job.name}
                  {model.jobCells.has(job.jid) && (
                    <button className="jp-Flinkbench-link" title="Show the cell this job came from" onClick={e => { e.stopPropagation(); run(CommandIDs.openCell, { jobId: job.jid }); }}>cell</button>
                  )}
                </td>
                <td><span className={`jp-Flinkbench-state jp-mod-${job.state.toLowerCase()}`}>{job.state}</span></td>
                <td>{duration(jobDuration(job))}</td>
                <td>{job.parallelism || '-'}</td>
                <td>{isTerminal(job.state) ? '-' : rate(job.recordsPerS)}</td>
                <td>{lastCheckpoint(job)}</td>
                <td>{job.restarts}</td>
                <td>
                  {!isTerminal(job.state) && job.state !== 'CANCELLING' && (
                    <button className="jp-Flinkbench-button jp-mod-danger" data-action="cancel" onClick={e => { e.stopPropagation(); run(CommandIDs.cancelJob, { jobId: job.jid }); }}>cancel</button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
