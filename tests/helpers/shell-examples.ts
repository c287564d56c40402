import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import MarkdownIt from 'markdown-it';

/**
 * A shell example of a Markdown document: a fenced block whose language is `sh` or `bash`. Its
 * info string may say `not-run: <reason>` after the language, for the rare example that cannot run
 * as a test (one that needs another machine).
 */
export interface ShellExample {
  /** The line of the document where the block starts. */
  line: number;
  code: string;
  /** Why the block is not run, or undefined: it runs. */
  notRun: string | undefined;
}

/** Every `sh` and `bash` block of a Markdown text, in order (by markdown-it, a CommonMark parser that jest can load). */
export function shellExamples(markdown: string): ShellExample[] {
  return new MarkdownIt()
    .parse(markdown, {})
    .filter((token) => token.type === 'fence')
    .flatMap((token) => {
      const [lang = '', ...meta] = token.info.trim().split(/\s+/);
      if (lang !== 'sh' && lang !== 'bash') return [];
      const notRun = /^not-run:\s*(.*)$/.exec(meta.join(' '))?.[1];
      return [{ line: (token.map?.[0] ?? 0) + 1, code: token.content, notRun: notRun?.trim() }];
    });
}

/**
 * What an example says its commands print: each `# → text`, on a line of its own or after a
 * command, in order. `…` stands for anything within a line.
 */
export function expectedOutput(code: string): string[] {
  return [...code.matchAll(/#\s*→\s*(.*)$/gm)].map((match) => match[1]!.trim());
}

/** Whether `output` holds each expected text in order; the first one it lacks, or undefined. */
export function missingOutput(output: string, expected: readonly string[]): string | undefined {
  let from = 0;
  for (const text of expected) {
    const pattern = new RegExp(
      text
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^\n]*?'),
      'g',
    );
    pattern.lastIndex = from;
    const match = pattern.exec(output);
    if (match === null) return text;
    from = match.index + match[0].length;
  }
  return undefined;
}

/** One example's run: its exit status (null when the shell ended inside it), and everything it printed. */
export interface ExampleRun {
  example: ShellExample;
  status: number | null;
  output: string;
  /** The first expected text its output lacks, or undefined. */
  missing: string | undefined;
}

/**
 * Runs examples in order in one bash, as a reader pastes them into one terminal: a variable set in
 * one is there in the next. The shell runs with `-eu -o pipefail`, so a failing command or an
 * undefined variable ends it, and the examples after it are not run. `rewrite` makes the changes a
 * reader makes (pasting their key). Resolves when the last example has run or the shell has ended.
 */
export async function runShellExamples(
  examples: readonly ShellExample[],
  options: { cwd: string; env: NodeJS.ProcessEnv; dir: string; rewrite: (code: string) => string },
): Promise<ExampleRun[]> {
  const shell = spawn('bash', ['--noprofile', '--norc', '-eu', '-o', 'pipefail'], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let said = '';
  const waiters: Array<() => void> = [];
  const wake = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  shell.stdout.on('data', (chunk: Buffer) => {
    said += chunk.toString();
    wake();
  });
  let ended = false;
  shell.on('exit', () => {
    ended = true;
    wake();
  });
  /** The status the shell reports after an example, or null once it has ended. */
  const statusOf = async (index: number): Promise<number | null> => {
    const marker = new RegExp(`^example ${index} done: (\\d+)$`, 'm');
    for (;;) {
      const match = marker.exec(said);
      if (match) return Number(match[1]);
      if (ended) return null;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };

  const runs: ExampleRun[] = [];
  for (const [index, example] of examples.entries()) {
    if (example.notRun !== undefined) continue;
    const script = path.join(options.dir, `example-${index}.sh`);
    const output = path.join(options.dir, `example-${index}.out`);
    fs.writeFileSync(script, `${options.rewrite(example.code)}\n`);
    // The example's own output goes to its file; only the marker comes back on the shell's stdout.
    shell.stdin.write(`source ${JSON.stringify(script)} > ${JSON.stringify(output)} 2>&1; echo "example ${index} done: $?"\n`);
    const status = await statusOf(index);
    const printed = fs.existsSync(output) ? fs.readFileSync(output, 'utf8').replace(/\r\n/g, '\n') : '';
    runs.push({ example, status, output: printed, missing: missingOutput(printed, expectedOutput(example.code)) });
    if (status === null) break;
  }
  shell.stdin.end();
  if (!ended) await new Promise<void>((resolve) => shell.on('exit', () => resolve()));
  return runs;
}
