import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The project's root, whose files a copy is made of. */
export const ROOT = path.join(__dirname, '..', '..');

/** What a copy of the project holds: everything a contributor edits and every tool's configuration. */
const PROJECT_FILES = [
  'src',
  'spec',
  'generated',
  'tests',
  'scripts',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'eslint.config.mjs',
  '.prettierrc.json',
  '.prettierignore',
  'jest.config.js',
  'CHANGELOG.md',
  'README.md',
  'docs',
  '.remarkrc.json',
  '.dependency-cruiser.cjs',
];

/**
 * A copy of the project in `dir`, sharing this one's node_modules, as a contributor's checkout would
 * be once built: with this one's build (`dist/` and its `.tsbuildinfo`, where there is one), so that
 * the copy's `npm run build` compiles only what the test changed, as the contributor's would.
 */
export function copyProject(dir: string): string {
  for (const part of PROJECT_FILES) fs.cpSync(path.join(ROOT, part), path.join(dir, part), { recursive: true });
  if (fs.existsSync(path.join(ROOT, 'dist'))) fs.cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

/** Runs `npm run <script>` in a project copy and returns its status and everything it printed. */
export function npmRun(dir: string, script: string, ...args: string[]): { status: number | null; output: string } {
  return runIn(dir, 'npm', ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])]);
}

/** A change to one file of a project copy: its text before, to its text after ('' for a file that is not there). */
export type FileEdit = readonly [file: string, change: (text: string) => string];

/**
 * Runs `npm run <script>` in a project copy with each of `edits` made to it (a file that is not
 * there is made), then puts every file back as it was, so that one copy serves many cases.
 */
export function npmRunWith(dir: string, script: string, edits: readonly FileEdit[]): { status: number | null; output: string } {
  const files = edits.map(([file]) => path.join(dir, file));
  const originals = files.map((file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined));
  try {
    edits.forEach(([file, change], i) => fs.writeFileSync(path.join(dir, file), change(originals[i] ?? '')));
    return npmRun(dir, script);
  } finally {
    files.forEach((file, i) => {
      const original = originals[i];
      if (original === undefined) fs.rmSync(file);
      else fs.writeFileSync(file, original);
    });
  }
}

/** Runs one of the project's installed tools (`jest`, `tsc`…) in a project copy, as `npx` would. */
export function npxRun(dir: string, tool: string, ...args: string[]): { status: number | null; output: string } {
  return runIn(dir, 'npx', ['--no-install', tool, ...args]);
}

function runIn(dir: string, command: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(command, args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

/** tsc's errors in what it printed, one entry each: tsc writes each as `path(line,col): error TS…: message`, its further lines indented. */
export function tscErrors(output: string): string[] {
  return output.split(/\n(?=\S)/);
}

/** Every file under `dir`'s `parts` with its content, to tell whether a command changed anything. */
export function snapshot(dir: string, parts: string[]): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (relative: string): void => {
    const full = path.join(dir, relative);
    if (!fs.existsSync(full)) return;
    if (fs.statSync(full).isDirectory()) for (const name of fs.readdirSync(full)) walk(path.join(relative, name));
    else files.set(relative, fs.readFileSync(full, 'utf8'));
  };
  for (const part of parts) walk(part);
  return files;
}

/**
 * A copy of the project for one test file, in a temporary directory of its own, and the list of
 * servers the file starts from it: after the file, every one is killed and the directory removed.
 */
export function projectForFile(): {
  tmpDir: string;
  dir: string;
  servers: Array<{ child: { kill: (signal: NodeJS.Signals) => boolean } }>;
} {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-project-'));
  const dir = copyProject(path.join(tmpDir, 'project'));
  const servers: Array<{ child: { kill: (signal: NodeJS.Signals) => boolean } }> = [];
  afterAll(() => {
    for (const server of servers) server.child.kill('SIGKILL');
    fs.rmSync(tmpDir, { recursive: true, force: true });
  });
  return { tmpDir, dir, servers };
}
