/**
 * "Submit cell as job": run the active code cell in the notebook's kernel as a `%%flink` cell, so it
 * behaves exactly like one (same job, same live view under the cell) without the user typing the
 * magic. Needs the `%%flink` cell magic from kernel_magics in the kernel; it is loaded when missing.
 */
import { Dialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import { CodeCell } from '@jupyterlab/cells';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { INotebookModel, INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { OutputArea } from '@jupyterlab/outputarea';
import { IStateDB } from '@jupyterlab/statedb';
import { CommandToolbarButton } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';

import { CommandIDs, FormBody } from './commands';
import { flinkbenchIcon } from './icons';
import { ClusterModel } from './model';

export interface ISubmitOptions {
  name: string;
  parallelism: string;
  checkpointInterval: string;
}

const STATE_KEY = 'flinkbench-jupyterlab:submit-options';
const DURATION = /^\d+(\.\d+)?\s*(ms|s|sec|min|m|h)?$/;

/**
 * A value as one argument of the `%%flink` line. IPython splits magic lines without POSIX rules, so
 * quotes stay part of the value: quote only what would otherwise split (a name with spaces).
 */
function argument(value: string): string {
  const flat = value.replace(/[\r\n]+/g, ' ').trim();
  return /^[^\s"']+$/.test(flat) ? flat : `"${flat.replace(/"/g, "'")}"`;
}

/** Option errors, one line each; an empty list means the options are usable. */
export function checkOptions(options: ISubmitOptions): string[] {
  const errors: string[] = [];
  if (!options.name.trim()) {
    errors.push('job name must not be empty');
  }
  if (options.parallelism && !/^[1-9]\d*$/.test(options.parallelism)) {
    errors.push(`parallelism must be a positive integer, got "${options.parallelism}"`);
  }
  if (options.checkpointInterval && !DURATION.test(options.checkpointInterval)) {
    errors.push(`checkpoint interval must be a duration such as "10 s" or "500 ms", got "${options.checkpointInterval}"`);
  }
  return errors;
}

/**
 * The cell's code as a `%%flink` cell with the dialog's options. A cell that already starts with
 * `%%flink` keeps its own options; the dialog's come after them, so they win.
 */
export function asFlinkCell(source: string, options: ISubmitOptions): string {
  const args = [`--name ${argument(options.name)}`];
  if (options.parallelism) {
    args.push(`--parallelism ${options.parallelism}`);
  }
  if (options.checkpointInterval) {
    args.push(`--checkpoint-interval ${options.checkpointInterval.replace(/\s+/g, '')}`);
  }
  const lines = source.split('\n');
  if (lines[0].trim().startsWith('%%flink')) {
    return [`${lines[0].trimEnd()} ${args.join(' ')}`, ...lines.slice(1)].join('\n');
  }
  return [`%%flink ${args.join(' ')}`, source].join('\n');
}

/**
 * Python run first, silently: kernel_magics.panel_submit.prepare (documented there) loads the magics when
 * needed and, when the panel is connected, points the kernel's Flink session at the same JobManager, so
 * the job shows up in the panel. Nothing is left in the user's namespace.
 */
export function preparationCode(url: string | null, tokenFile: string | null): string {
  const py = (v: string | null) => (v ? JSON.stringify(v) : 'None');
  return `__import__("kernel_magics.panel_submit").panel_submit.prepare(${py(url)}, ${py(tokenFile)})`;
}

/** The preparation's error, with what to do when the kernel's environment has no Flinkbench. */
function preparationError(ename: string, evalue: string): string {
  if (ename === 'ModuleNotFoundError' && evalue.includes('kernel_magics')) {
    return `${evalue}: install Flinkbench's Jupyter extra (pip install "flinkbench[jupyter]") in this kernel's environment`;
  }
  return evalue;
}

async function askOptions(defaults: ISubmitOptions): Promise<ISubmitOptions | null> {
  let values = defaults;
  for (;;) {
    const form = new FormBody([
      { name: 'name', label: 'Job name', value: values.name },
      { name: 'parallelism', label: 'Parallelism', value: values.parallelism, type: 'number', hint: 'Empty: the cluster default.' },
      { name: 'checkpointInterval', label: 'Checkpoint interval', value: values.checkpointInterval, hint: 'e.g. "10 s"; empty: no checkpoints.' }
    ]);
    const result = await showDialog({
      title: 'Submit cell as job', body: form,
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Submit' })]
    });
    if (!result.button.accept || !result.value) {
      return null;
    }
    values = result.value as unknown as ISubmitOptions;
    const errors = checkOptions(values);
    if (!errors.length) {
      return values;
    }
    await showErrorMessage('Submit cell as job', errors.join('\n'));
  }
}

function showError(cell: CodeCell, ename: string, evalue: string, traceback: string[] = []): void {
  cell.model.outputs.clear();
  cell.model.outputs.add({ output_type: 'error', ename, evalue, traceback });
}

export async function submitActiveCell(panel: NotebookPanel, model: ClusterModel, state: IStateDB | null): Promise<void> {
  const cell = panel.content.activeCell;
  if (!(cell instanceof CodeCell)) {
    await showErrorMessage('Submit cell as job', 'Select a code cell to submit.');
    return;
  }
  const index = panel.content.activeCellIndex;
  const saved = ((state && (await state.fetch(STATE_KEY))) || {}) as Partial<ISubmitOptions>;
  const options = await askOptions({
    name: saved.name || `${panel.context.path.split('/').pop()!.replace(/\.ipynb$/, '')}-cell-${index + 1}`,
    parallelism: saved.parallelism || '',
    checkpointInterval: saved.checkpointInterval || ''
  });
  if (!options) {
    return;
  }
  await state?.save(STATE_KEY, { ...options });
  const session = panel.sessionContext;
  await session.ready;
  const kernel = session.session?.kernel;
  if (!kernel) {
    showError(cell, 'NoKernel', 'the notebook has no running kernel: start one and submit again');
    return;
  }
  const connected = model.link === 'live' ? model.connection : null;
  const prep = await kernel.requestExecute({
    code: preparationCode(connected?.url || null, connected?.token_file || null), silent: true, store_history: false
  }).done;
  if (prep.content.status === 'error') {
    showError(cell, prep.content.ename, preparationError(prep.content.ename, prep.content.evalue), prep.content.traceback);
    return;
  }
  model.expectSubmission(options.name.trim(), { path: panel.context.path, cellId: cell.model.id });
  cell.setPrompt('*');
  // As when a cell runs normally: what it outputs now is trusted, so widgets render as widgets.
  cell.model.trusted = true;
  const reply = await OutputArea.execute(asFlinkCell(cell.model.sharedModel.getSource(), options), cell.outputArea, session);
  if (reply && !cell.isDisposed) {
    cell.model.executionCount = reply.content.execution_count;
  }
}

/** Adds the "Submit cell as job" button to every notebook's toolbar. */
export class SubmitButtonExtension implements DocumentRegistry.IWidgetExtension<NotebookPanel, INotebookModel> {
  constructor(private readonly commands: CommandRegistry) {}

  createNew(panel: NotebookPanel): IDisposable {
    const button = new CommandToolbarButton({
      commands: this.commands, id: CommandIDs.submitCell, icon: flinkbenchIcon, label: 'Submit job'
    });
    if (!panel.toolbar.insertAfter('cellType', 'flinkbench-submit', button)) {
      panel.toolbar.addItem('flinkbench-submit', button);
    }
    return new DisposableDelegate(() => button.dispose());
  }
}

export function registerSubmitCommand(
  commands: CommandRegistry,
  tracker: INotebookTracker,
  model: ClusterModel,
  state: IStateDB | null
): void {
  commands.addCommand(CommandIDs.submitCell, {
    label: 'Submit cell as job',
    caption: 'Run the active code cell as a Flinkbench job (%%flink) on the connected JobManager',
    icon: flinkbenchIcon,
    isEnabled: () => tracker.activeCell?.model.type === 'code',
    execute: async () => {
      const panel = tracker.currentWidget;
      if (panel) {
        await submitActiveCell(panel, model, state);
      }
    }
  });
}
