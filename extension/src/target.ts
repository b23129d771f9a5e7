/**
 * Which cluster the panel shows. Following the notebook in focus (the default): the cluster its kernel
 * follows, or the one it started and that has stopped since; when its kernel follows none, the Jupyter
 * server's own JobManager (a local cluster started from the panel, or the server's default). Connected by
 * hand: the server's JobManager, whatever the focus. The server extension decides a kernel's state from
 * the kernel's own record (kernel_magics/server/kernels.py); this only picks which question to ask.
 */
import { ApiError, kernelScope, requestAPI, Scope } from './request';
import { IConnectionInfo } from './types';

export interface ITarget {
  scope: Scope;
  info: IConnectionInfo;
}

/** The target for a notebook's kernel (null: no notebook, or connected by hand). */
export async function resolveTarget(kernelId: string | null): Promise<ITarget> {
  let reason = '';
  if (kernelId) {
    try {
      const mine = await requestAPI<IConnectionInfo>(`${kernelScope(kernelId)}cluster`);
      if (mine.state !== 'none') {
        return { scope: kernelScope(kernelId), info: mine };
      }
      reason = mine.reason || '';
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) {
        throw error; // a kernel the server no longer runs counts as one with no cluster
      }
    }
  }
  const server = await requestAPI<IConnectionInfo>('connection');
  return { scope: '', info: server.configured ? server : { ...server, reason } };
}

/** Whether two targets are the same cluster in the same state (so the panel need not reconnect). */
export function sameTarget(a: ITarget | null, b: ITarget | null): boolean {
  return !!a && !!b && a.scope === b.scope && a.info.url === b.info.url && a.info.configured === b.info.configured &&
    (a.info.state || '') === (b.info.state || '');
}

/** Whether both are the same running JobManager, reached through either scope. */
export function sameJobManager(a: ITarget | null, b: ITarget | null): boolean {
  const running = (t: ITarget | null) => !!t && t.info.configured && t.info.state !== 'stopped';
  return running(a) && running(b) && a!.info.url === b!.info.url;
}
