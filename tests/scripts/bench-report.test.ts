import path from 'node:path';
import { medianRatio } from '../../scripts/bench/measure';
import { checkPerformancePage, onVirtualMachine, runSection, withLatestRun } from '../../scripts/bench/report';
import { ROOT } from '../helpers/project';

const PAGE = path.join(ROOT, 'docs', 'performance.md');

test('the performance page has the markers npm run bench writes its latest run between', () => {
  expect(() => checkPerformancePage(PAGE)).not.toThrow();
});

test('a run replaces what lay between the markers, and nothing else', () => {
  const page = '# Performance\n\nbefore\n<!-- bench:start -->\nold run\n<!-- bench:end -->\nafter\n';

  expect(withLatestRun(page, '| new | run |\n', 'page.md')).toBe(
    '# Performance\n\nbefore\n<!-- bench:start -->\n| new | run |\n<!-- bench:end -->\nafter\n',
  );
});

test.each([
  ['no markers', '# Performance\n'],
  ['no end marker', '<!-- bench:start -->\nrun\n'],
  ['the markers in the wrong order', '<!-- bench:end -->\nrun\n<!-- bench:start -->\n'],
])('a page with %s is refused, naming the page and the markers', (_case, page) => {
  expect(() => withLatestRun(page, 'run', 'docs/performance.md')).toThrow(
    'docs/performance.md must hold <!-- bench:start --> and then <!-- bench:end -->',
  );
});

test('a run on the page is headed by its day, CPU model, whether the host is a VM, and runtime, with its sections one level below', () => {
  const run = '## Throughput\n\n| a | b |\n\n## PostgreSQL\n\ntext with ## inside\n';
  const machine = { date: '2026-11-26', cpus: 2, model: 'Intel(R) Xeon(R) Processor', vm: true, memoryGiB: 24, node: 'v24.21.0' };

  expect(runSection(run, machine)).toBe(
    '### 2026-11-26: 2 × Intel(R) Xeon(R) Processor (a VM), 24 GiB, Node.js 24.21.0\n\n#### Throughput\n\n| a | b |\n\n#### PostgreSQL\n\ntext with ## inside',
  );
  expect(runSection(run, { ...machine, vm: false })).toMatch(/^### 2026-11-26: 2 × Intel\(R\) Xeon\(R\) Processor, 24 GiB/);
});

test.each([
  ['a hypervisor among the CPU flags', 'processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n', true],
  ['none', 'processor\t: 0\nflags\t\t: fpu vme lahf_lm\n', false],
  ['no /proc/cpuinfo to read', '', false],
])('the host is taken for a VM when /proc/cpuinfo shows %s', (_case, cpuinfo, vm) => {
  expect(onVirtualMachine(cpuinfo)).toBe(vm);
});

test("a ratio is the median of each round's own ratio, not the ratio of the two medians", () => {
  const ours = [900, 400, 1000];
  const theirs = [1000, 500, 800];

  // The rounds' ratios are 0.9, 0.8 and 1.25; the medians' ratio would be 900 / 800.
  expect(medianRatio(ours, theirs)).toBe(0.9);
  expect(() => medianRatio([1, 2], [1])).toThrow('medianRatio needs as many rounds of each, at least one: 2 and 1');
  expect(() => medianRatio([], [])).toThrow('at least one');
});
