/**
 * flinkbench-jupyterlab: a side panel for Flinkbench clusters and a "Submit cell as job" command.
 * The panel and the command talk to the Flinkbench server extension only (see request.ts).
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';

import { CommandIDs, registerPanelCommands } from './commands';
import { followNotebooks } from './follow';
import { ClusterModel } from './model';
import { FlinkbenchPanel } from './panel';
import { highlightSqlCells } from './sqlCells';
import { registerSubmitCommand, SubmitButtonExtension } from './submit';

const PLUGIN_ID = 'flinkbench-jupyterlab:plugin';
const DEFAULT_REFRESH_MS = 1000;

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Flinkbench side panel and "Submit cell as job".',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ISettingRegistry, ICommandPalette, ILayoutRestorer, IStateDB, IDocumentManager],
  activate: async (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    registry: ISettingRegistry | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    state: IStateDB | null,
    docManager: IDocumentManager | null
  ) => {
    const model = new ClusterModel(DEFAULT_REFRESH_MS);
    const settings = await loadSettings(registry);
    registerPanelCommands(app, model, settings, docManager);
    registerSubmitCommand(app.commands, tracker, model, state);
    app.docRegistry.addWidgetExtension('Notebook', new SubmitButtonExtension(app.commands));
    highlightSqlCells(tracker);
    app.contextMenu.addItem({ command: CommandIDs.submitCell, selector: '.jp-Notebook .jp-CodeCell', rank: 0 });
    addPanel(app, model, restorer, palette);
    followNotebooks(tracker, model);
    settings?.changed.connect(() => void applySettings(model, settings));
    // Not awaited: the app is restored only after every plugin, this one included, has activated.
    void app.restored.then(() => applySettings(model, settings));
  }
};

async function loadSettings(registry: ISettingRegistry | null): Promise<ISettingRegistry.ISettings | null> {
  if (!registry) {
    return null;
  }
  try {
    return await registry.load(PLUGIN_ID);
  } catch (error) {
    console.warn('flinkbench-jupyterlab: settings unavailable, using defaults', error);
    return null;
  }
}

/** The side panel, its "show" command and the palette entries. */
function addPanel(app: JupyterFrontEnd, model: ClusterModel, restorer: ILayoutRestorer | null,
  palette: ICommandPalette | null): void {
  const panel = new FlinkbenchPanel(model, app.commands);
  app.shell.add(panel, 'left', { rank: 600 });
  restorer?.add(panel, 'flinkbench-panel');
  app.commands.addCommand(CommandIDs.openPanel, {
    label: 'Flinkbench: Show the cluster panel',
    execute: () => app.shell.activateById(panel.id)
  });
  if (palette) {
    const category = 'Flinkbench';
    for (const command of [CommandIDs.submitCell, CommandIDs.openPanel, CommandIDs.openDashboard, CommandIDs.connect,
      CommandIDs.followNotebooks, CommandIDs.reconnect, CommandIDs.startLocal, CommandIDs.stopLocal]) {
      palette.addItem({ command, category });
    }
  }
}

/** The settings' JobManager, when set, was connected by hand and stays the panel's; otherwise the panel
 * follows the notebook in focus. */
async function applySettings(model: ClusterModel, settings: ISettingRegistry.ISettings | null): Promise<void> {
  const refresh = Number(settings?.get('refreshRate').composite) || DEFAULT_REFRESH_MS;
  model.refreshMs = Math.max(200, refresh);
  const url = (settings?.get('jobmanagerUrl').composite as string) || '';
  const tokenFile = (settings?.get('tokenFile').composite as string) || '';
  if (!url ? model.follow && model.connection : url === model.connection?.url && !model.follow) {
    return; // only the refresh rate changed, or this is the change a panel command saved itself
  }
  if (url) {
    try {
      await model.useJobManager(url, tokenFile);
      return;
    } catch (error) {
      model.error = `the JobManager in the Flinkbench settings cannot be used: ${(error as Error).message}`;
    }
  }
  model.follow = true;
  await model.connect();
}

export default plugin;
