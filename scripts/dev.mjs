// `npm run dev`: serves the demo store and restarts on every change under src/ or spec/. A change to
// a document regenerates generated/ first. Each build goes to its own directory under .dev/ with the
// documents it was built from, so a change that does not compile, or a server that will not start,
// leaves the last good server running (or brings it back) and prints why.
// Arguments after `--` go to `serve` (`npm run dev -- --port 3000`).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { typesMaker } from './openapi-types.mjs';
import { incrementalBuilder } from './typescript-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = path.join(root, '.dev');
/** The documents, and the types generated from each. */
const DOCUMENTS = JSON.parse(readFileSync(path.join(root, 'spec', 'documents.json'), 'utf8'));
const WATCHED = ['src', 'spec'];
/** Changes that arrive together (an editor's save, a checkout) make one rebuild. */
const SETTLE_MS = 150;
const serveArgs = ['serve', '--demo', ...process.argv.slice(2)];

let builds = 0;
/** Each document as its types were last generated from it: an editor's save can reach us under a temporary name. */
const generatedFrom = new Map();
/** The server that is running, and the build it runs from. */
let current;
/** The last build that started and listened: what a failed restart falls back to. */
let lastGood;
let rebuilding = false;
let pending = new Set();
let timer;
let stopping = false;

say('starting');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
// The server's code only, compiled incrementally into one place by this process, which keeps what
// it compiled between builds; each good build is then copied out.
writeFileSync(
  path.join(work, 'tsconfig.json'),
  JSON.stringify({
    extends: '../tsconfig.build.json',
    compilerOptions: { outDir: 'next', rootDir: '..', incremental: false, noEmitOnError: true },
    include: ['../src', '../generated'],
  }),
);
const compile = incrementalBuilder(path.join(work, 'tsconfig.json'), root);
// Watching starts before the first build, so that nothing saved while it runs is missed (Node sets
// up a recursive watch in the background); what changes meanwhile is rebuilt right after it.
for (const dir of WATCHED) {
  watch(path.join(root, dir), { recursive: true }, (_event, file) => {
    if (file === null || stopping) return;
    pending.add(path.join(dir, file));
    clearTimeout(timer);
    timer = setTimeout(() => void drain(), SETTLE_MS);
  });
}
rebuilding = true;
try {
  await rebuild(new Set());
} finally {
  rebuilding = false;
}
say(`watching ${WATCHED.join('/ and ')}/; press Ctrl-C to stop`);
void drain();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void shutdown());

async function drain() {
  if (rebuilding || pending.size === 0) return;
  const changed = pending;
  pending = new Set();
  rebuilding = true;
  try {
    await rebuild(changed);
  } finally {
    rebuilding = false;
  }
  if (pending.size > 0) await drain();
}

/** Regenerates the types of changed documents, builds, and swaps the server for one on the new build. */
async function rebuild(changed) {
  const documents = DOCUMENTS.filter(
    (document) => readFileSync(path.join(root, document.document), 'utf8') !== generatedFrom.get(document.document),
  );
  const named = [...changed].filter((file) => existsSync(path.join(root, file)));
  if (builds > 0) say(`${named.length > 0 ? named.join(', ') : 'a file'} changed`);
  // Made in this process: what openapi-typescript finds wrong in a document, it prints itself.
  const types = documents.length > 0 ? await typesMaker(root) : undefined;
  for (const document of documents) {
    const text = readFileSync(path.join(root, document.document), 'utf8');
    try {
      writeFileSync(path.join(root, document.types), await types(document.document));
    } catch (err) {
      return keep(`${document.types} could not be generated from ${document.document}`, err instanceof Error ? err.message : String(err));
    }
    generatedFrom.set(document.document, text);
  }
  const build = path.join(work, `build-${++builds}`);
  const compiled = compile();
  if (compiled.status !== 0) return keep('the change does not compile', compiled.output);
  // The validators the build compiles ahead of time, from the first build's code; they do not
  // change with the documents.
  if (!existsSync(path.join(work, 'next', 'generated', 'openapi-3.1-check.js'))) {
    const precompile = run([path.join('scripts', 'precompile.mjs'), path.join(work, 'next')]);
    if (precompile.status !== 0) say(`the validators could not be precompiled; servers compile their own\n${precompile.output}`);
  }
  cpSync(path.join(work, 'next'), build, { recursive: true });
  // The server reads its documents and changelog next to its code: this build keeps the ones it was built from.
  cpSync(path.join(root, 'spec'), path.join(build, 'spec'), { recursive: true });
  cpSync(path.join(root, 'CHANGELOG.md'), path.join(build, 'CHANGELOG.md'));
  await stopServer();
  const started = await startServer(build);
  if (started.ok) {
    if (lastGood !== undefined && lastGood !== build) rmSync(lastGood, { recursive: true, force: true });
    lastGood = build;
    say(`serving build ${builds} at ${started.url}`);
    return;
  }
  rmSync(build, { recursive: true, force: true });
  if (lastGood === undefined) return say('the server did not start; fix the change and save again');
  const restored = await startServer(lastGood);
  say(`the new server did not start; ${restored.ok ? `the last good one is back at ${restored.url}` : 'nor did the last good one'}`);
}

/**
 * Starts `serve` from a build; resolves once it listens (its demo banner on stdout, or its
 * `listening` log line, names the URL), or once it exits without listening.
 */
function startServer(build) {
  const child = spawn(process.execPath, [path.join(build, 'src', 'cli', 'main.js'), ...serveArgs], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  let listening = false;
  return new Promise((resolve) => {
    const exited = new Promise((done) => child.once('exit', done));
    const watchFor = (stream, out) =>
      stream.on('data', (chunk) => {
        out.write(chunk);
        if (listening) return;
        seen += chunk.toString();
        const url = /"url":"(http[^"]+)"|serving the demo store .* at (http\S+)\n/.exec(seen);
        if (url === null) return;
        listening = true;
        current = { child, build, exited };
        resolve({ ok: true, url: url[1] ?? url[2] });
      });
    watchFor(child.stdout, process.stdout);
    watchFor(child.stderr, process.stderr);
    child.once('exit', () => {
      if (!listening) resolve({ ok: false });
      else if (current?.child === child) {
        current = undefined;
        if (!stopping) say('the server exited; it restarts on the next change');
      }
    });
  });
}

async function stopServer() {
  if (current === undefined) return;
  const { child, exited } = current;
  current = undefined;
  child.kill('SIGTERM');
  await exited;
}

function keep(reason, output) {
  process.stderr.write(output.endsWith('\n') || output === '' ? output : `${output}\n`);
  say(`${reason}; ${current ? 'the last good server keeps running' : 'no server is running'}`);
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

async function shutdown() {
  stopping = true;
  clearTimeout(timer);
  await stopServer();
  rmSync(work, { recursive: true, force: true });
  process.exit(0);
}

function say(message) {
  process.stderr.write(`dev: ${message}\n`);
}
