/**
 * `%%flink sql` cells are highlighted as SQL: their editor's MIME type follows the cell's first line
 * (as JupySQL's plugin does for `%%sql`). The notebook resets code cells to the kernel's language when
 * cells are added or the kernel changes, so the type is set again after each of those.
 */
import { Cell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

const SQL_CELL = /^\s*%%flink\s+sql\b/;
export const SQL_MIME = 'text/x-sql';

/** Whether a cell's source is a `%%flink sql` cell. */
export function isSqlCell(source: string): boolean {
  return SQL_CELL.test(source);
}

function follow(cell: Cell, kernelMime: () => string): void {
  if (cell.model.type !== 'code') {
    return;
  }
  const update = () => {
    const wanted = isSqlCell(cell.model.sharedModel.getSource()) ? SQL_MIME : kernelMime();
    if (cell.model.mimeType !== wanted) {
      cell.model.mimeType = wanted;
    }
  };
  cell.model.contentChanged.connect(update);
  update();
}

function watch(panel: NotebookPanel): void {
  const notebook = panel.content;
  const kernelMime = () => notebook.codeMimetype;
  const all = () => notebook.widgets.forEach(cell => follow(cell, kernelMime));
  notebook.model?.cells.changed.connect(() => setTimeout(all, 0));
  panel.sessionContext.kernelChanged.connect(() => setTimeout(all, 0));
  void panel.revealed.then(all);
}

export function highlightSqlCells(tracker: INotebookTracker): void {
  tracker.widgetAdded.connect((_, panel) => watch(panel));
  tracker.forEach(watch);
}
