/**
 * The job graph in the side panel: the same picture the notebook and the dashboard draw with Bokeh.
 * The server extension builds it (`graph/<job id>`, runtime.views.graph: layout, Flink's colours,
 * the text in each box, the bottleneck hint), so this view only paints what it is given as SVG and
 * re-reads it while the job runs. Hovering a task lists its subtasks; clicking shows them below, and
 * clicking a subtask opens its drill-down into its Spark stages (./drilldown.tsx).
 */
import React, { useEffect, useState } from 'react';

import { bytes, count } from '../format';
import { requestAPI, Scope } from '../request';
import { SubtaskDrilldown } from './drilldown';

interface IGraphSubtask {
  subtask: number;
  state: string;
  taskmanager: string;
  slot: number | null;
  records_in: number;
  records_out: number;
  busy: number;
  backpressure: number;
  state_size: number | null;
  last_checkpoint_id: number | null;
  last_checkpoint_duration_s: number | null;
}

interface IGraphNode {
  id: string;
  name: string;
  title: string;
  lines: string[];
  parallelism: number;
  x: number;
  y: number;
  width: number;
  height: number;
  state: string;
  busy: number;
  backpressure: number;
  fill: string;
  border: string;
  subtasks: IGraphSubtask[];
}

interface IGraphEdge {
  source: string;
  target: string;
  ship_strategy: string;
  label: string;
  points: [[number, number], [number, number]];
}

export interface IJobGraph {
  job_id: string;
  state: string;
  nodes: IGraphNode[];
  edges: IGraphEdge[];
  width: number;
  height: number;
  bottleneck: string | null;
  hint: string;
}

const TERMINAL = new Set(['FINISHED', 'FAILED', 'CANCELED']);

/** The job's graph, re-read every `refreshMs` until the job ends. */
function useJobGraph(scope: Scope, jid: string, refreshMs: number): { graph: IJobGraph | null; error: string } {
  const [state, setState] = useState<{ graph: IJobGraph | null; error: string }>({ graph: null, error: '' });
  useEffect(() => {
    let live = true;
    let timer = 0;
    const load = async () => {
      let next = 0;
      try {
        const graph = await requestAPI<IJobGraph>(`${scope}graph/${encodeURIComponent(jid)}`);
        if (live) {
          setState({ graph, error: '' });
        }
        next = TERMINAL.has(graph.state) ? 0 : refreshMs;
      } catch (error) {
        if (live) {
          setState(s => ({ graph: s.graph, error: String((error as Error).message) }));
        }
        next = refreshMs * 3;
      }
      if (live && next) {
        timer = window.setTimeout(() => void load(), next);
      }
    };
    void load();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [scope, jid, refreshMs]);
  return state;
}

function subtaskSummary(node: IGraphNode): string {
  return node.subtasks
    .map(s => `#${s.subtask + 1} ${s.state} on ${s.taskmanager || '-'} slot ${s.slot ?? '-'}: in ${count(s.records_in)}, out ${count(s.records_out)}`)
    .join('\n');
}

function GraphNode({ node, onPick }: { node: IGraphNode; onPick: (id: string) => void }): JSX.Element {
  return (
    <g className="jp-Flinkbench-node" data-node-id={node.id} data-name={node.name} data-state={node.state}
      data-busy={node.busy.toFixed(3)} data-backpressure={node.backpressure.toFixed(3)} data-fill={node.fill}
      onClick={() => onPick(node.id)}>
      <title>{`${node.name}\n${subtaskSummary(node)}`}</title>
      <rect x={node.x} y={node.y} width={node.width} height={node.height} rx={3} fill={node.fill} stroke={node.border} strokeWidth={2} />
      <text x={node.x + 8} y={node.y + 18} className="jp-Flinkbench-nodeTitle">{node.title}</text>
      {node.lines.map((line, i) => (
        <text key={i} x={node.x + 8} y={node.y + 36 + i * 14} className="jp-Flinkbench-nodeLine">{line}</text>
      ))}
    </g>
  );
}

function GraphEdge({ edge }: { edge: IGraphEdge }): JSX.Element {
  const [[x0, y0], [x1, y1]] = edge.points;
  return (
    <g className="jp-Flinkbench-edge" data-edge={`${edge.source}->${edge.target}`} data-kind={edge.ship_strategy}>
      <line x1={x0} y1={y0} x2={x1} y2={y1} markerEnd="url(#jp-Flinkbench-arrow)" />
      <text x={(x0 + x1) / 2} y={(y0 + y1) / 2 - 5} textAnchor="middle">{edge.label}</text>
    </g>
  );
}

function SubtaskTable({ node, onOpen }: { node: IGraphNode; onOpen: (subtask: number) => void }): JSX.Element {
  return (
    <table className="jp-Flinkbench-table jp-Flinkbench-graphSubtasks" data-node-id={node.id}>
      <thead><tr><th>#</th><th>State</th><th>TaskManager</th><th>Slot</th><th>In</th><th>Out</th><th>Busy</th><th>State size</th><th>Last checkpoint</th></tr></thead>
      <tbody>
        {node.subtasks.map(s => (
          <tr key={s.subtask} data-subtask={s.subtask} className="jp-Flinkbench-clickable" title="Open its Spark stages"
            onClick={() => onOpen(s.subtask)}>
            <td>{s.subtask + 1}</td><td>{s.state}</td><td title={s.taskmanager}>{s.taskmanager || '-'}</td><td>{s.slot ?? '-'}</td>
            <td>{count(s.records_in)}</td><td>{count(s.records_out)}</td><td>{Math.round(s.busy * 100)} %</td>
            <td>{s.state_size !== null ? bytes(s.state_size) : '-'}</td>
            <td>{s.last_checkpoint_duration_s !== null ? `#${s.last_checkpoint_id} in ${s.last_checkpoint_duration_s.toFixed(2)} s` : '-'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function JobGraphView({ scope, jid, refreshMs }: { scope: Scope; jid: string; refreshMs: number }): JSX.Element {
  const { graph, error } = useJobGraph(scope, jid, refreshMs);
  const [picked, setPicked] = useState<string | null>(null);
  const [opened, setOpened] = useState<{ node: string; subtask: number } | null>(null);
  if (!graph) {
    return <p className="jp-Flinkbench-muted">{error ? `Graph unavailable: ${error}` : 'Loading the job graph…'}</p>;
  }
  const shown = graph.nodes.find(n => n.id === picked) || graph.nodes.find(n => n.id === graph.bottleneck);
  return (
    <div className="jp-Flinkbench-jobGraph" data-job-id={graph.job_id} data-bottleneck={graph.bottleneck || ''}>
      {graph.hint && <p className="jp-Flinkbench-bottleneck">⚠ {graph.hint}</p>}
      <div className="jp-Flinkbench-scroll">
        <svg width={graph.width} height={graph.height} viewBox={`0 0 ${graph.width} ${graph.height}`}>
          <defs>
            <marker id="jp-Flinkbench-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">
              <path d="M 0 0 L 10 5 L 0 10 z" />
            </marker>
          </defs>
          {graph.edges.map(e => <GraphEdge key={`${e.source}-${e.target}`} edge={e} />)}
          {graph.nodes.map(n => <GraphNode key={n.id} node={n} onPick={setPicked} />)}
        </svg>
      </div>
      {shown && (
        <>
          <div className="jp-Flinkbench-muted">Subtasks of <b>{shown.name}</b> (click a task for another)</div>
          <SubtaskTable node={shown} onOpen={subtask => setOpened({ node: shown.id, subtask })} />
          {opened && opened.node === shown.id && (
            <SubtaskDrilldown scope={scope} jid={graph.job_id} vertex={shown.id} subtask={opened.subtask} name={shown.name} />
          )}
        </>
      )}
    </div>
  );
}
