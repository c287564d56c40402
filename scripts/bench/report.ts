import fs from 'node:fs';

// The performance page (docs/performance.md) holds the latest full run of `npm run bench`, which
// the bench rewrites between two markers.
const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** `text` with what lies between its markers replaced by `run`; throws, naming the page, when a marker is missing or out of order. */
export function withLatestRun(text: string, run: string, page: string): string {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`${page} must hold ${START} and then ${END}, between which npm run bench writes its latest run`);
  }
  return `${text.slice(0, start + START.length)}\n${run.trim()}\n${text.slice(end)}`;
}

/** Throws unless the performance page has its markers: checked before a run, so that a long run is never lost. */
export function checkPerformancePage(page: string): void {
  withLatestRun(fs.readFileSync(page, 'utf8'), '', page);
}

/** Writes `run` between the markers of the performance page. */
export function writeLatestRun(run: string, page: string): void {
  fs.writeFileSync(page, withLatestRun(fs.readFileSync(page, 'utf8'), run, page));
}

/** Whether this host is a virtual machine: its CPU flags name a hypervisor (Linux's /proc/cpuinfo). */
export function onVirtualMachine(cpuinfo = readCpuinfo()): boolean {
  return /^flags\s*:.*\bhypervisor\b/m.test(cpuinfo);
}

function readCpuinfo(): string {
  try {
    return fs.readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}

/**
 * A run as the performance page holds it, under "Latest full run": a heading naming the day, the
 * CPU model, whether the host is a VM (system calls cost more there) and the runtime (ratios differ
 * between hosts and runtimes), and the run's own sections one level below it.
 */
export function runSection(
  run: string,
  machine: { date: string; cpus: number; model: string; vm: boolean; memoryGiB: number; node: string },
): string {
  const host = `${machine.cpus} × ${machine.model}${machine.vm ? ' (a VM)' : ''}`;
  const heading = `### ${machine.date}: ${host}, ${machine.memoryGiB} GiB, Node.js ${machine.node.replace(/^v/, '')}`;
  return [heading, '', run.trim().replace(/^## /gm, '#### ')].join('\n');
}
