/**
 * Calls to the Flinkbench server extension under `<base_url>/flinkbench/`. The server adds the
 * cluster token; the browser only ever presents its Jupyter credentials.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

export const URL_PREFIX = 'flinkbench';

/** A failed call, carrying the message the server or the JobManager gave. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message);
  }
}

export async function requestAPI<T>(path: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, URL_PREFIX, path);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ApiError(`Jupyter server unreachable: ${String(error)}`, 0);
  }
  const text = await response.text();
  let data: any = {};
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { errors: [text.slice(0, 300)] };
    }
  }
  if (!response.ok) {
    const message = (data.errors && data.errors.join('; ')) || data.message || response.statusText;
    throw new ApiError(message || `HTTP ${response.status}`, response.status);
  }
  return data as T;
}

/**
 * Which cluster a call reaches: '' for the server's own JobManager (the panel's choice or the server's
 * default), `kernel/<id>/` for the cluster a notebook's kernel follows.
 */
export type Scope = string;

export function kernelScope(kernelId: string): Scope {
  return `kernel/${kernelId}/`;
}

/** JSON call to the JobManager's REST API through the server extension (`[scope]api/<path>`). */
export function jobManagerAPI<T>(scope: Scope, path: string, method = 'GET', body?: unknown): Promise<T> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'Content-Type': 'application/json' };
  }
  return requestAPI<T>(`${scope}api/${path.replace(/^\//, '')}`, init);
}

/** URL of the forwarded event stream, with the token only when Jupyter itself wants it in URLs. */
export function eventsUrl(scope: Scope): string {
  const settings = ServerConnection.makeSettings();
  let url = URLExt.join(settings.wsUrl, URL_PREFIX, scope, 'events');
  if (settings.token && settings.appendToken) {
    url += `?token=${encodeURIComponent(settings.token)}`;
  }
  return url;
}

/**
 * The page that opens the JobManager's web dashboard in a new tab, logged in: the server extension asks the
 * JobManager for a one-time login link and redirects there, so the token never reaches the page.
 */
export function dashboardUrl(scope: Scope, jobId?: string): string {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, URL_PREFIX, scope, 'dashboard');
  return jobId ? `${url}?job=${encodeURIComponent(jobId)}` : url;
}
