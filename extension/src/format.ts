/** Small formatters shared by the panel's views. */

export function duration(ms: number): string {
  if (!isFinite(ms) || ms < 0) {
    return '-';
  }
  const s = Math.floor(ms / 1000);
  if (s < 60) {
    return `${s}s`;
  }
  const m = Math.floor(s / 60);
  if (m < 60) {
    return `${m}m ${s % 60}s`;
  }
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function rate(perS: number | undefined): string {
  const v = perS || 0;
  if (v >= 1e6) {
    return `${(v / 1e6).toFixed(1)}M/s`;
  }
  if (v >= 1e3) {
    return `${(v / 1e3).toFixed(1)}k/s`;
  }
  return `${Math.round(v)}/s`;
}

export function count(n: number | undefined): string {
  const v = n || 0;
  return v >= 1e6 ? `${(v / 1e6).toFixed(2)}M` : v >= 1e4 ? `${(v / 1e3).toFixed(1)}k` : String(v);
}

export function bytes(n: number | undefined): string {
  const v = n || 0;
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  let x = v;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${i ? x.toFixed(1) : x} ${units[i]}`;
}

export function clock(ms: number): string {
  return ms > 0 ? new Date(ms).toLocaleTimeString() : '-';
}

/** Event time as the runtime reports it: seconds since the epoch, or a plain number before 2001. */
export function watermark(value: number | null | undefined): string {
  if (value === null || value === undefined || !isFinite(value)) {
    return '-';
  }
  return value > 1e9 ? new Date(value * 1000).toISOString().replace('T', ' ').replace('Z', '') : String(value);
}

/** Flink's backpressure levels: OK up to 10 % of the time blocked, LOW up to 50 %, then HIGH. */
export function backpressure(ratio: number | undefined): { level: 'ok' | 'low' | 'high'; text: string } {
  const r = ratio || 0;
  const level = r <= 0.1 ? 'ok' : r <= 0.5 ? 'low' : 'high';
  return { level, text: `${level.toUpperCase()} ${Math.round(r * 100)}%` };
}

/** A stable colour per job, so a job's slots can be told apart in the grid. */
export function jobColor(jobId: string): string {
  let h = 0;
  for (let i = 0; i < jobId.length; i++) {
    h = (h * 31 + jobId.charCodeAt(i)) % 360;
  }
  return `hsl(${h}, 60%, 55%)`;
}

/** The first 8 characters of an id: enough to tell TaskManagers and jobs apart at a glance. */
export function short(id: string | null | undefined): string {
  return id ? String(id).slice(0, 8) : '?';
}

/** The last line of a Python traceback: the exception and its message. */
export function lastLine(text: string | null | undefined): string {
  const lines = String(text || '').trim().split('\n');
  return lines[lines.length - 1] || '';
}
