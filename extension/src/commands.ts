/**
 * The panel's actions as JupyterLab commands, so the same action runs from a panel button, the
 * command palette or a keyboard shortcut. Destructive ones ask for confirmation first; failures
 * show the server's message.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { Dialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { Widget } from '@lumino/widgets';

import { short } from './format';
import { ClusterModel, ICellLink } from './model';
import { dashboardUrl, jobManagerAPI, requestAPI } from './request';
import { ILocalClusterStatus } from './types';

export namespace CommandIDs {
  export const submitCell = 'flinkbench:submit-cell';
  export const openPanel = 'flinkbench:open-panel';
  export const connect = 'flinkbench:connect';
  export const reconnect = 'flinkbench:reconnect';
  export const startLocal = 'flinkbench:start-local-cluster';
  export const stopLocal = 'flinkbench:stop-local-cluster';
  export const cancelJob = 'flinkbench:cancel-job';
  export const savepoint = 'flinkbench:trigger-savepoint';
  export const stopWithSavepoint = 'flinkbench:stop-with-savepoint';
  export const killTaskManager = 'flinkbench:kill-taskmanager';
  export const killLeader = 'flinkbench:kill-leader';
  export const openCell = 'flinkbench:open-cell';
  export const followNotebooks = 'flinkbench:follow-notebooks';
  export const openDashboard = 'flinkbench:open-dashboard';
  export const resumeSavepoint = 'flinkbench:resume-savepoint';
  export const disposeSavepoint = 'flinkbench:dispose-savepoint';
}

/** A small form for a dialog body: labelled inputs, read back as strings. */
export class FormBody extends Widget {
  constructor(fields: { name: string; label: string; value: string; type?: string; hint?: string }[]) {
    super({ node: document.createElement('div') });
    this.addClass('jp-Flinkbench-form');
    for (const field of fields) {
      const label = document.createElement('label');
      label.textContent = field.label;
      const input = document.createElement('input');
      input.name = field.name;
      input.type = field.type || 'text';
      if (input.type === 'checkbox') {
        input.checked = field.value === 'true';
      } else {
        input.value = field.value;
      }
      input.className = 'jp-mod-styled';
      label.appendChild(input);
      if (field.hint) {
        const hint = document.createElement('small');
        hint.textContent = field.hint;
        label.appendChild(hint);
      }
      this.node.appendChild(label);
    }
  }

  getValue(): Record<string, string> {
    const out: Record<string, string> = {};
    this.node.querySelectorAll('input').forEach(input => {
      out[input.name] = input.type === 'checkbox' ? String(input.checked) : input.value.trim();
    });
    return out;
  }
}

async function confirm(title: string, body: string, label: string): Promise<boolean> {
  const result = await showDialog({
    title,
    body,
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label })]
  });
  return result.button.accept;
}

/** Run an action, reporting its failure in a dialog; resolves to whether it succeeded. */
async function attempt(what: string, action: () => Promise<unknown>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (error) {
    await showErrorMessage(`Flinkbench: ${what} failed`, (error as Error).message);
    return false;
  }
}

type Commands = JupyterFrontEnd['commands'];

/** Register every panel command, grouped by what they act on. */
export function registerPanelCommands(
  app: JupyterFrontEnd,
  model: ClusterModel,
  settings: ISettingRegistry.ISettings | null,
  docManager: IDocumentManager | null
): void {
  registerConnectionCommands(app.commands, model, settings);
  registerLocalClusterCommands(app.commands, model, settings);
  registerJobCommands(app.commands, model);
  registerSavepointCommands(app.commands, model);
  registerFaultCommands(app.commands, model);
  registerNavigationCommands(app.commands, model, docManager);
}

/** Which JobManager the panel and submissions talk to. */
function registerConnectionCommands(commands: Commands, model: ClusterModel, settings: ISettingRegistry.ISettings | null): void {
  commands.addCommand(CommandIDs.connect, {
    label: 'Flinkbench: Connect to a JobManager…',
    caption: 'Forward the panel and submissions to the JobManager at a URL',
    execute: async () => {
      const form = new FormBody([
        { name: 'url', label: 'JobManager URL', value: model.connection?.url || 'http://127.0.0.1:8081' },
        {
          name: 'token_file', label: 'Token file', value: model.connection?.token_file || '',
          hint: 'Read by the Jupyter server; the token never reaches the browser.'
        }
      ]);
      const result = await showDialog({
        title: 'Connect to a JobManager', body: form,
        buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Connect' })]
      });
      if (!result.button.accept || !result.value) {
        return;
      }
      const { url, token_file } = result.value as Record<string, string>;
      if (await attempt('connecting', () => model.useJobManager(url, token_file)) && settings) {
        await settings.set('jobmanagerUrl', url);
        await settings.set('tokenFile', token_file);
      }
    }
  });

  commands.addCommand(CommandIDs.reconnect, {
    label: 'Flinkbench: Reconnect to the JobManager',
    execute: () => model.connect()
  });
  registerFollowCommands(commands, model, settings);
}

/** Back to the notebook's own cluster, and its dashboard in the browser. */
function registerFollowCommands(commands: Commands, model: ClusterModel, settings: ISettingRegistry.ISettings | null): void {
  commands.addCommand(CommandIDs.followNotebooks, {
    label: 'Flinkbench: Show the cluster of the notebook in focus',
    caption: 'Leave the JobManager connected by hand; the panel follows each notebook\'s own cluster again',
    isEnabled: () => !model.follow,
    execute: async () => {
      if (await attempt('following the notebooks', () => model.followNotebooks()) && settings) {
        await settings.set('jobmanagerUrl', '');
        await settings.set('tokenFile', '');
      }
    }
  });

  commands.addCommand(CommandIDs.openDashboard, {
    label: 'Flinkbench: Open the web dashboard',
    caption: 'The JobManager\'s dashboard in a new browser tab, logged in (the token stays on the server)',
    isEnabled: () => model.link === 'live',
    execute: args => {
      window.open(dashboardUrl(model.scope, (args.jobId as string) || undefined), '_blank', 'noopener');
    }
  });
}

/**
 * A cluster the Jupyter server starts and stops as child processes. Starting one is a choice made in the
 * panel, as Connect… is: the panel shows it until it stops, then follows the notebook again (or the
 * JobManager connected by hand before).
 */
function registerLocalClusterCommands(commands: Commands, model: ClusterModel, settings: ISettingRegistry.ISettings | null): void {
  commands.addCommand(CommandIDs.startLocal, {
    label: 'Flinkbench: Start a local cluster…',
    isEnabled: () => !['starting', 'running'].includes(model.connection?.local_cluster.state || ''),
    execute: () => startLocalCluster(model)
  });

  commands.addCommand(CommandIDs.stopLocal, {
    label: 'Flinkbench: Stop the local cluster',
    isEnabled: () => model.connection?.local_cluster.state === 'running',
    execute: async () => {
      if (!(await confirm('Stop the local cluster?', 'Every job on it is cancelled and its TaskManagers end.', 'Stop'))) {
        return;
      }
      await attempt('stopping the local cluster', () => requestAPI('local-cluster', { method: 'DELETE' }));
      model.follow = !settings?.get('jobmanagerUrl').composite;
      await model.connect();
    }
  });
}

async function startLocalCluster(model: ClusterModel): Promise<void> {
  const form = new FormBody([
    { name: 'taskmanagers', label: 'TaskManagers', value: '1', type: 'number', hint: 'Each one runs a Spark JVM.' },
    { name: 'slots', label: 'Slots per TaskManager', value: '2', type: 'number' },
    { name: 'fault_injection', label: 'Allow killing TaskManagers and the JobManager', value: 'true', type: 'checkbox' }
  ]);
  const result = await showDialog({
    title: 'Start a local cluster', body: form,
    buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Start' })]
  });
  if (!result.button.accept || !result.value) {
    return;
  }
  const v = result.value as Record<string, string>;
  if (model.connection) {
    model.connection.local_cluster = { ...model.connection.local_cluster, state: 'starting', error: null };
    model.emit();
  }
  const started = await attempt('starting the local cluster', () =>
    requestAPI<ILocalClusterStatus>('local-cluster', {
      method: 'POST',
      body: JSON.stringify({
        taskmanagers: Number(v.taskmanagers), slots: Number(v.slots), fault_injection: v.fault_injection === 'true'
      })
    })
  );
  if (started) {
    model.follow = false;
  }
  await model.connect();
}

/** Cancel, savepoint and stop one job. */
function registerJobCommands(commands: Commands, model: ClusterModel): void {
  const jobName = (jobId: string) => model.jobs.get(jobId)?.name || short(jobId);

  commands.addCommand(CommandIDs.cancelJob, {
    label: args => (args.jobId ? `Cancel ${jobName(args.jobId as string)}` : 'Cancel job'),
    execute: async args => {
      const jobId = args.jobId as string;
      if (await confirm('Cancel job?', `Cancel "${jobName(jobId)}" (${jobId})? Its state is not kept.`, 'Cancel job')) {
        await attempt('cancelling', () => jobManagerAPI(model.scope, `jobs/${jobId}?mode=cancel`, 'PATCH'));
      }
    }
  });

  commands.addCommand(CommandIDs.savepoint, {
    label: 'Trigger savepoint',
    execute: async args => {
      const jobId = args.jobId as string;
      const ok = await attempt('triggering a savepoint', () =>
        jobManagerAPI(model.scope, `jobs/${jobId}/savepoints`, 'POST', { 'cancel-job': false })
      );
      if (ok) {
        void showDialog({ title: 'Savepoint triggered', body: `The savepoint of "${jobName(jobId)}" appears under Checkpoints when it completes.`, buttons: [Dialog.okButton()] });
      }
    }
  });

  commands.addCommand(CommandIDs.stopWithSavepoint, {
    label: 'Stop with savepoint',
    execute: async args => {
      const jobId = args.jobId as string;
      if (await confirm('Stop with savepoint?', `Take a savepoint of "${jobName(jobId)}" and stop it.`, 'Stop job')) {
        await attempt('stopping with a savepoint', () => jobManagerAPI(model.scope, `jobs/${jobId}/stop`, 'POST', { drain: false }));
      }
    }
  });
}

/** The savepoint browser's actions: start the job that took a savepoint from it again, or delete it. */
function registerSavepointCommands(commands: Commands, model: ClusterModel): void {
  commands.addCommand(CommandIDs.resumeSavepoint, {
    label: 'Resume the job of a savepoint',
    execute: async args => {
      const path = args.path as string;
      const allow = args.allow === 'true';
      const question = `Start the job that took ${path} again from it${allow ? ', dropping the state no operator claims' : ''}?`;
      if (await confirm('Resume from savepoint?', question, 'Resume')) {
        await attempt('resuming', () => jobManagerAPI(model.scope, 'savepoints/resume', 'POST', { path, allowNonRestoredState: allow }));
      }
    }
  });

  commands.addCommand(CommandIDs.disposeSavepoint, {
    label: 'Dispose of a savepoint',
    execute: async args => {
      const path = args.path as string;
      if (await confirm('Dispose of savepoint?', `Delete ${path}? No job can start from it afterwards.`, 'Dispose')) {
        await attempt('disposing', () => jobManagerAPI(model.scope, 'savepoint-disposal', 'POST', { 'savepoint-path': path }));
      }
    }
  });
}

/** Kill processes on purpose, for teaching failover (only where the cluster allows fault injection). */
function registerFaultCommands(commands: Commands, model: ClusterModel): void {
  commands.addCommand(CommandIDs.killTaskManager, {
    label: 'Kill TaskManager',
    isEnabled: () => model.faultInjection,
    execute: async args => {
      const tmId = args.tmId as string;
      if (await confirm('Kill TaskManager?', `SIGKILL TaskManager ${tmId} and its Spark JVM; its jobs fail over.`, 'Kill')) {
        await attempt('killing the TaskManager', () => jobManagerAPI(model.scope, `taskmanagers/${tmId}/kill`, 'POST', {}));
      }
    }
  });

  commands.addCommand(CommandIDs.killLeader, {
    label: 'Kill the leading JobManager',
    isEnabled: () => model.faultInjection,
    execute: async () => {
      if (await confirm('Kill the leading JobManager?', 'SIGKILL the leader; a standby takes over if there is one.', 'Kill')) {
        await attempt('killing the JobManager', () => jobManagerAPI(model.scope, 'jobmanager/kill', 'POST', {}));
      }
    }
  });
}

/** From a job in the panel back to the notebook cell it was submitted from. */
function registerNavigationCommands(commands: Commands, model: ClusterModel, docManager: IDocumentManager | null): void {
  commands.addCommand(CommandIDs.openCell, {
    label: 'Show the cell this job came from',
    execute: async args => {
      const link = model.jobCells.get(args.jobId as string);
      if (link && docManager) {
        await revealCell(docManager, link);
      }
    }
  });
}

async function revealCell(docManager: IDocumentManager, link: ICellLink): Promise<void> {
  const widget = docManager.openOrReveal(link.path);
  if (!(widget instanceof NotebookPanel)) {
    return;
  }
  await widget.context.ready;
  const notebook = widget.content;
  const index = notebook.widgets.findIndex(cell => cell.model.id === link.cellId);
  if (index >= 0) {
    notebook.activeCellIndex = index;
    await notebook.scrollToItem(index);
  }
}
