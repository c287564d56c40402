import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, snapshot } from '../helpers/project';
import { tempDir } from '../helpers/temp-dir';

// `npm run dev` compiles in its own process, keeping the last program between builds
// (scripts/typescript-build.mjs), where it ran `tsc -p` per change. What each build prints, its
// status and what it writes must stay what tsc's would be: this fails if the installed TypeScript
// changes under the builder.
const tmp = tempDir();
afterAll(tmp.cleanup);

const CONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022'],
    skipLibCheck: true,
    module: 'commonjs',
    strict: true,
    declaration: true,
    outDir: 'out',
    rootDir: '.',
    noEmitOnError: true,
    types: [],
  },
  include: ['src'],
};

/** One change to the project's files (path to its new text), then a build. */
type Step = Record<string, string>;

const STEPS: Step[] = [
  {
    'src/price.ts': 'export function price(cents: number): number {\n  return cents / 100;\n}\n',
    'src/order.ts': "import { price } from './price';\n\nexport const total: number = price(250);\n",
  },
  // A change that breaks a file it did not touch: nothing is written.
  { 'src/price.ts': 'export function price(cents: number): string {\n  return (cents / 100).toFixed(2);\n}\n' },
  // The fix: the file changed two builds ago is written now, with the one fixed.
  { 'src/order.ts': "import { price } from './price';\n\nexport const total: string = price(250);\n" },
  // A syntax error: reported before any type error.
  { 'src/order.ts': "import { price } from './price';\n\nexport const total: string = price(250;\n" },
  // Fixed, and a new file.
  {
    'src/order.ts': "import { price } from './price';\n\nexport const total: string = price(250);\n",
    'src/receipt.ts': "import { total } from './order';\n\nexport const line = `total: ${total}`;\n",
  },
];

/** What a build came to: its exit status, what it printed, and every file under out/ after it (path to text). */
type Built = { status: number; output: string; out: Record<string, string> };

/** Each step made in `builderDir` and built by the builder, and in `tscDir` and built by `tsc -p`, one after another. */
function run(builderDir: string, tscDir: string): Array<{ builder: Built; tsc: Built }> {
  // After step n, each directory's out/ is copied to after-n/, to be read here.
  const script = `
    import fs from 'node:fs';
    import path from 'node:path';
    import { spawnSync } from 'node:child_process';
    import { incrementalBuilder } from ${JSON.stringify(path.join(ROOT, 'scripts', 'typescript-build.mjs'))};
    const [builderDir, tscDir] = ${JSON.stringify([builderDir, tscDir])};
    const build = incrementalBuilder(path.join(builderDir, 'tsconfig.json'), builderDir);
    const results = [];
    for (const step of ${JSON.stringify(STEPS)}) {
      for (const dir of [builderDir, tscDir])
        for (const [file, text] of Object.entries(step)) fs.writeFileSync(path.join(dir, file), text);
      const tsc = spawnSync(process.execPath, [${JSON.stringify(path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'))}, '-p', 'tsconfig.json'], { cwd: tscDir, encoding: 'utf8' });
      results.push({ builder: build(), tsc: { status: tsc.status, output: tsc.stdout + tsc.stderr } });
      for (const dir of [builderDir, tscDir])
        fs.cpSync(path.join(dir, 'out'), path.join(dir, 'after-' + (results.length - 1)), { recursive: true });
    }
    process.stdout.write(JSON.stringify(results));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  const out = (dir: string, step: number): Record<string, string> => Object.fromEntries(snapshot(path.join(dir, `after-${step}`), ['src']));
  return (JSON.parse(result.stdout) as Array<{ builder: Omit<Built, 'out'>; tsc: Omit<Built, 'out'> }>).map(({ builder, tsc }, step) => ({
    builder: { ...builder, out: out(builderDir, step) },
    tsc: { ...tsc, out: out(tscDir, step) },
  }));
}

test("each build prints and exits as tsc's does, and the builds write what tsc writes", () => {
  const builderDir = path.join(tmp.dir, 'builder');
  const tscDir = path.join(tmp.dir, 'tsc');
  for (const dir of [builderDir, tscDir]) {
    fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(CONFIG));
  }

  const results = run(builderDir, tscDir);

  expect(results.map(({ builder }) => builder)).toEqual(results.map(({ tsc }) => tsc));
  expect(results.map(({ tsc }) => tsc.status)).toEqual([0, 1, 0, 1, 0]);
  expect(results[1]!.tsc.output).toBe("src/order.ts(3,14): error TS2322: Type 'string' is not assignable to type 'number'.\n");
  expect(results[3]!.tsc.output).toBe("src/order.ts(3,39): error TS1005: ')' expected.\n");
  // Nothing is written by a build with errors; the fix writes the file changed before it too.
  expect(results[1]!.tsc.out).toEqual(results[0]!.tsc.out);
  expect(results[2]!.tsc.out['src/price.js']).toContain('toFixed(2)');
  expect(Object.keys(results[4]!.tsc.out).sort()).toEqual(
    ['order.d.ts', 'order.js', 'price.d.ts', 'price.js', 'receipt.d.ts', 'receipt.js'].map((file) => `src/${file}`),
  );
}, 60000);
