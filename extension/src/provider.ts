/**
 * The local resource provider's decisions (ResourceProviderDecision events) in the panel's model:
 * a TaskManager being started shows with its slots to come, one stopped for idleness goes away, and
 * every decision becomes a line of the cluster's activity.
 */
import type { ResourceProviderDecisionEvent } from './events';
import type { IActivity, ITaskManagerState } from './types';

type TaskManagers = Map<string, ITaskManagerState>;

function setStarting(tms: TaskManagers, tmId: string, slots: number, reason: string): void {
  const known = tms.get(tmId);
  if (known && !known.starting) {
    return; // registered already
  }
  const grid = Array.from({ length: slots }, (_, index) => ({ index, jobId: null, jobName: null, tasks: new Set<string>() }));
  tms.set(tmId, { id: tmId, host: '', lost: false, starting: true, reason, slots: grid });
}

/** Fold one decision into the TaskManagers; returns its activity line. */
export function applyProviderDecision(tms: TaskManagers, e: ResourceProviderDecisionEvent): Pick<IActivity, 'text' | 'kind'> {
  if (e.tm_id && (e.decision === 'requested' || e.decision === 'started')) {
    setStarting(tms, e.tm_id, e.slots || 0, e.reason);
  } else if (e.tm_id && (e.decision === 'stopped' || e.decision === 'given-up')) {
    tms.delete(e.tm_id);
  }
  const who = e.tm_id ? `TaskManager ${e.tm_id} ` : '';
  const kind = e.decision === 'refused' || e.decision === 'given-up' ? 'warn' : 'info';
  return { text: `resource provider: ${who}${e.decision}: ${e.reason}`, kind };
}

/** The TaskManagers the provider is starting, from the event stream's first message. */
export function addStartingFromSnapshot(tms: TaskManagers, provider: Record<string, any> | undefined): void {
  for (const tmId of (provider?.starting || []) as string[]) {
    setStarting(tms, tmId, provider?.['slots-per-taskmanager'] || 0, '');
  }
}
