/**
 * One subtask's drill-down into its Spark work, opened from the job graph's subtask table: its recent Spark
 * stages slowest first, the stage time per plan, and its busy and phase times beside them, from the JobManager's
 * `GET /jobs/:jobid/vertices/:vertexid/subtasks/:subtaskindex/spark` (the notebook's `%flink drilldown` and the
 * dashboard's subtask page show the same answer).
 */
import React, { useEffect, useState } from 'react';

import { bytes } from '../format';
import { jobManagerAPI, Scope } from '../request';

interface IStage {
  'stage-id': number;
  attempt: number;
  'job-ids': number[];
  plan: string;
  status: string;
  duration: number;
  tasks: number;
  'executor-run-time': number;
  'executor-cpu-time': number;
  'input-bytes': number;
  'shuffle-read-bytes': number;
  'shuffle-write-bytes': number;
  'memory-spilled-bytes': number;
  'disk-spilled-bytes': number;
}

interface IPlanTime {
  plan: string;
  stages: number;
  duration: number;
  share: number;
}

export interface ISubtaskSpark {
  subtask: number;
  attempt: number;
  status: string;
  'taskmanager-id': string | null;
  'busy-time': number;
  'stage-time': number;
  'stage-count': number;
  'dominant-plan': string | null;
  'dominant-share': number;
  phases: Record<string, number>;
  plans: IPlanTime[];
  stages: IStage[];
  parts?: IPart[];
  'dominant-part'?: string | null;
}

export interface IPart {
  part: string;
  description: string;
  time: number;
  share: number;
}

const PART_NAMES: Record<string, string> = {
  stages: 'Spark stages', driver: "Spark's driver outside any stage (optimizer, planning)",
  transfer: 'Arrow in and out of Spark', taskmanager: "the TaskManager's own work"
};

const percent = (share: number): string => `${Math.round(share * 100)} %`;
const duration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

function StageTable({ stages }: { stages: IStage[] }): JSX.Element {
  return (
    <table className="jp-Flinkbench-table jp-Flinkbench-drilldownStages">
      <thead><tr><th>Stage</th><th>Jobs</th><th>Plan</th><th>Duration</th><th>Tasks</th><th>CPU</th><th>Shuffle read</th><th>Shuffle write</th><th>Spilled</th></tr></thead>
      <tbody>
        {stages.map(s => (
          <tr key={`${s['stage-id']}.${s.attempt}`} data-stage-id={s['stage-id']} data-duration={s.duration}>
            <td>{s['stage-id']}.{s.attempt}</td><td>{s['job-ids'].join(', ')}</td><td><code>{s.plan}</code></td>
            <td>{duration(s.duration)}</td><td>{s.tasks}</td><td>{duration(s['executor-cpu-time'])}</td>
            <td>{bytes(s['shuffle-read-bytes'])}</td><td>{bytes(s['shuffle-write-bytes'])}</td>
            <td>{bytes(s['memory-spilled-bytes'] + s['disk-spilled-bytes'])}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Beside({ info }: { info: ISubtaskSpark }): JSX.Element {
  const phases = Object.entries(info.phases).sort((a, b) => b[1] - a[1]);
  return (
    <div className="jp-Flinkbench-drilldownBeside">
      <table className="jp-Flinkbench-table jp-Flinkbench-drilldownPlans">
        <thead><tr><th>Plan</th><th>Stages</th><th>Share</th></tr></thead>
        <tbody>{info.plans.map(p => <tr key={p.plan}><td><code>{p.plan}</code></td><td>{p.stages}</td><td>{percent(p.share)}</td></tr>)}</tbody>
      </table>
      <table className="jp-Flinkbench-table jp-Flinkbench-drilldownPhases">
        <thead><tr><th>Phase</th><th>Time</th></tr></thead>
        <tbody>{phases.map(([name, s]) => <tr key={name}><td>{name}</td><td>{duration(s * 1000)}</td></tr>)}</tbody>
      </table>
    </div>
  );
}

export function SubtaskDrilldown({ scope, jid, vertex, subtask, name }: {
  scope: Scope; jid: string; vertex: string; subtask: number; name: string;
}): JSX.Element {
  const [state, setState] = useState<{ info: ISubtaskSpark | null; error: string }>({ info: null, error: '' });
  useEffect(() => {
    let live = true;
    setState({ info: null, error: '' });
    jobManagerAPI<ISubtaskSpark>(scope, `jobs/${jid}/vertices/${vertex}/subtasks/${subtask}/spark`)
      .then(info => live && setState({ info, error: '' }))
      .catch(error => live && setState({ info: null, error: String((error as Error).message) }));
    return () => {
      live = false;
    };
  }, [scope, jid, vertex, subtask]);
  const { info, error } = state;
  if (!info) {
    return <p className="jp-Flinkbench-muted">{error ? `Drill-down unavailable: ${error}` : 'Loading its Spark stages…'}</p>;
  }
  const busy = info['busy-time'];
  return (
    <div className="jp-Flinkbench-drilldown" data-subtask={info.subtask} data-vertex={vertex}>
      <div><b>{name} ({info.subtask + 1})</b>: busy {duration(busy)}; Spark stages {duration(info['stage-time'])}
        {busy ? ` (${percent(info['stage-time'] / busy)} of its busy time)` : ''} in {info['stage-count']} stages</div>
      {info.parts && info.parts.length > 0 && <div className="jp-Flinkbench-drilldownParts">its busy time in parts: {info.parts.map(p => (
        `${PART_NAMES[p.part] ?? p.part} ${duration(p.time)} (${percent(p.share)})`)).join(', ')}</div>}
      {info['dominant-part'] && info['dominant-part'] !== 'stages' && <div className="jp-Flinkbench-bottleneck">⚠ {PART_NAMES[info['dominant-part']] ?? info['dominant-part']} takes most of its time</div>}
      {info['dominant-plan'] && <div className="jp-Flinkbench-bottleneck">⚠ Spark stage <code>{info['dominant-plan']}</code> takes {percent(info['dominant-share'])} of its recent stage time</div>}
      <div className="jp-Flinkbench-muted">Its recent Spark stages, slowest first</div>
      <StageTable stages={info.stages} />
      <Beside info={info} />
    </div>
  );
}
