/**
 * The notebook in focus, for the panel: tells the model which notebook (and kernel) has the focus, and
 * asks it to look again whenever that kernel may have started, stopped or changed its cluster: after one
 * of its cells ran (`%flink local`, `%flink stop`, `%flink connect`), and when the kernel restarts, dies
 * or is replaced. Not on every idle status: a kernel with live views goes busy and idle several times a
 * second for their redraws alone.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { ClusterModel } from './model';

const KERNEL_CHANGES = new Set(['restarting', 'autorestarting', 'dead', 'starting']);
const RECHECK_DELAY_MS = 300;

export function followNotebooks(tracker: INotebookTracker, model: ClusterModel): void {
  let watched: ISessionContext | null = null;
  let timer = 0;
  const recheckSoon = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void model.recheck(), RECHECK_DELAY_MS);
  };
  const focus = () => {
    const panel = tracker.currentWidget;
    model.showNotebook(panel ? {
      name: panel.context.path.split('/').pop() || panel.context.path,
      kernelId: panel.sessionContext.session?.kernel?.id || null
    } : null);
  };
  const onStatus = (_: ISessionContext, status: string) => {
    if (KERNEL_CHANGES.has(status)) {
      recheckSoon();
    }
  };
  const watch = (panel: NotebookPanel | null) => {
    watched?.kernelChanged.disconnect(focus);
    watched?.statusChanged.disconnect(onStatus);
    watched = panel?.sessionContext || null;
    watched?.kernelChanged.connect(focus);
    watched?.statusChanged.connect(onStatus);
    focus();
  };
  tracker.currentChanged.connect((_, panel) => watch(panel));
  NotebookActions.executed.connect((_, { notebook }) => {
    if (notebook === tracker.currentWidget?.content) {
      recheckSoon();
    }
  });
  watch(tracker.currentWidget);
}
