/**
 * The left-area side panel: connection state and actions, the cluster, the jobs and one job's
 * detail. Redraws are throttled to the refresh rate from the settings, whatever the event rate.
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React, { useEffect, useState } from 'react';

import { CommandIDs } from './commands';
import { flinkbenchIcon } from './icons';
import { ClusterModel } from './model';
import { ClusterView } from './views/cluster';
import { JobDetailView } from './views/jobDetail';
import { JobsView } from './views/jobs';
import { SavepointsView } from './views/savepoints';

type Run = (command: string, args?: Record<string, string>) => void;

/** Re-render on model changes at most once per refresh interval, and every interval for clocks. */
function useThrottledModel(model: ClusterModel): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    let last = 0;
    let timer = 0;
    const redraw = () => {
      last = Date.now();
      timer = 0;
      setTick(t => t + 1);
    };
    const onChange = () => {
      const wait = model.refreshMs - (Date.now() - last);
      if (wait <= 0) {
        redraw();
      } else if (!timer) {
        timer = window.setTimeout(redraw, wait);
      }
    };
    model.changed.connect(onChange);
    const clock = window.setInterval(redraw, Math.max(model.refreshMs, 1000));
    return () => {
      model.changed.disconnect(onChange);
      window.clearTimeout(timer);
      window.clearInterval(clock);
    };
  }, [model, model.refreshMs]);
}

/** Whose cluster is shown: the notebook in focus's, or a JobManager connected by hand or by the server. */
function whose(model: ClusterModel): JSX.Element {
  const url = <span className="jp-Flinkbench-url">{model.connection?.url}</span>;
  if (model.scope && model.notebook) {
    return <span>Cluster of <b data-field="notebook">{model.notebook.name}</b>: {url}</span>;
  }
  const source = model.connection?.source;
  const how = model.follow || source === 'local cluster' ? source : 'connected by hand';
  return <span>Connected to {url} <span className="jp-Flinkbench-muted">({how})</span></span>;
}

function Status({ model }: { model: ClusterModel }): JSX.Element {
  const notebook = model.notebook ? <b>{model.notebook.name}</b> : 'this notebook';
  switch (model.link) {
    case 'live':
      return whose(model);
    case 'connecting':
      return <span>Connecting{model.connection?.url ? ` to ${model.connection.url}` : ''}…</span>;
    case 'stopped':
      return (
        <span>
          The cluster of {notebook} at <span className="jp-Flinkbench-url">{model.connection?.url}</span> has
          stopped: {model.error}.
          <div className="jp-Flinkbench-muted">Run <code>%flink local</code> in the notebook for a new one.</div>
        </span>
      );
    case 'not-configured':
      return (
        <span>
          No cluster{model.notebook ? <> for {notebook}</> : ''} yet.
          <div className="jp-Flinkbench-muted">
            Run <code>%load_ext kernel_magics</code> and <code>%flink local</code> in a notebook, or start a
            local cluster here.
          </div>
        </span>
      );
    default:
      return (
        <span>
          <b>JobManager unreachable</b>
          <div className="jp-Flinkbench-error">{model.error}</div>
          <span className="jp-Flinkbench-muted">Retrying automatically; what is shown below may be out of date.</span>
        </span>
      );
  }
}

function LocalClusterButton({ model, run }: { model: ClusterModel; run: Run }): JSX.Element | null {
  const local = model.connection?.local_cluster;
  if (local && (local.state === 'running' || local.state === 'stopping')) {
    return model.scope ? null : (
      <button className="jp-Flinkbench-button jp-mod-danger" disabled={local.state === 'stopping'} onClick={() => run(CommandIDs.stopLocal)}>Stop local cluster</button>
    );
  }
  return (
    <button className="jp-Flinkbench-button" data-action="start-local" disabled={local?.state === 'starting'} onClick={() => run(CommandIDs.startLocal)}>
      {local?.state === 'starting' ? 'Starting local cluster…' : 'Start local cluster…'}
    </button>
  );
}

function ConnectionBar({ model, run }: { model: ClusterModel; run: Run }): JSX.Element {
  const local = model.connection?.local_cluster;
  return (
    <div className={`jp-Flinkbench-connection jp-mod-${model.link}`} data-link={model.link} data-scope={model.scope}
      data-url={model.connection?.url || ''} data-follow={String(model.follow)}>
      <div className="jp-Flinkbench-status"><span className="jp-Flinkbench-dot" /><Status model={model} /></div>
      <div className="jp-Flinkbench-actions">
        {model.link === 'live' && (
          <button className="jp-Flinkbench-button" data-action="dashboard" title="The JobManager's web dashboard in a new tab, logged in"
            onClick={() => run(CommandIDs.openDashboard)}>Dashboard</button>
        )}
        {!model.follow && (
          <button className="jp-Flinkbench-button" data-action="follow" onClick={() => run(CommandIDs.followNotebooks)}>Follow the notebook</button>
        )}
        <button className="jp-Flinkbench-button" onClick={() => run(CommandIDs.connect)}>Connect…</button>
        {model.link === 'unreachable' && <button className="jp-Flinkbench-button" onClick={() => run(CommandIDs.reconnect)}>Retry now</button>}
        <LocalClusterButton model={model} run={run} />
      </div>
      {local?.state === 'failed' && local.error && <div className="jp-Flinkbench-error">{local.error}</div>}
    </div>
  );
}

function PanelView({ model, run }: { model: ClusterModel; run: Run }): JSX.Element {
  useThrottledModel(model);
  const [selected, select] = useState<string | null>(null);
  const job = selected ? model.jobs.get(selected) : undefined;
  const stale = model.link !== 'live';
  return (
    <div className="jp-Flinkbench-body">
      <ConnectionBar model={model} run={run} />
      {model.link !== 'not-configured' && model.link !== 'stopped' && (
        <div className={stale ? 'jp-Flinkbench-stale' : ''}>
          <ClusterView model={model} run={run} />
          <JobsView model={model} selected={selected} select={select} run={run} />
          {job && <JobDetailView model={model} job={job} close={() => select(null)} run={run} />}
          <SavepointsView model={model} run={run} />
        </div>
      )}
    </div>
  );
}

export class FlinkbenchPanel extends ReactWidget {
  constructor(
    private readonly model: ClusterModel,
    private readonly commands: CommandRegistry
  ) {
    super();
    this.id = 'flinkbench-panel';
    this.title.icon = flinkbenchIcon;
    this.title.caption = 'Flinkbench cluster and jobs';
    this.addClass('jp-FlinkbenchPanel');
  }

  protected render(): JSX.Element {
    const run: Run = (command, args) => void this.commands.execute(command, args);
    return <PanelView model={this.model} run={run} />;
  }
}
