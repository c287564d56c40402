import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, cliEnv } from '../helpers/cli';

// On a Node.js older than the project supports, the install and the bin each stop at once and name
// the command that works instead. The machine's own node is older than 22.14 where the system Node.js
// is 20; elsewhere there is no older node to run them on.
const ROOT = path.join(__dirname, '..', '..');
const SYSTEM_NODE = '/usr/bin/node';
const systemVersion = fs.existsSync(SYSTEM_NODE)
  ? spawnSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim()
  : '';
const [major = 99, minor = 0] = systemVersion.split('.').map(Number);
const older = systemVersion !== '' && (major < 22 || (major === 22 && minor < 14));

test("the install's check and the bin's check refuse below the engines.node that package.json declares", () => {
  const { engines, scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
    scripts: Record<string, string>;
  };

  expect(engines.node).toBe('>=22.14');
  expect(scripts.preinstall).toBe('node scripts/check-node.cjs');
  expect(fs.readFileSync(path.join(ROOT, 'src', 'cli', 'supported-node.ts'), 'utf8')).toContain(
    'major < 22 || (major === 22 && minor < 14)',
  );
  // On this Node.js, the install's check lets it through.
  expect(spawnSync(process.execPath, ['scripts/check-node.cjs'], { cwd: ROOT, encoding: 'utf8' }).status).toBe(0);
});

(older ? describe : describe.skip)(`on the machine's Node.js ${systemVersion}`, () => {
  test('npm install is stopped by its check, which names scripts/with-node.sh', () => {
    const result = spawnSync(SYSTEM_NODE, ['scripts/check-node.cjs'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_command: 'install' },
    });

    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`petstore-orders needs Node.js 22.14 or later (the 22 and 24 LTS lines); this is v${systemVersion}.`);
    expect(result.stderr).toContain('scripts/with-node.sh 24 npm install');
  });

  test.each([
    ['the bin, run by npx', { npm_lifecycle_event: 'npx' }, 'scripts/with-node.sh 24 npx petstore-orders keys list'],
    [
      'the bin, run as bin/petstore-orders',
      { PETSTORE_CLI: 'bin/petstore-orders' },
      'scripts/with-node.sh 24 bin/petstore-orders keys list',
    ],
    ['npm start', { npm_lifecycle_event: 'start' }, 'scripts/with-node.sh 24 npm start'],
    ['npm run cli', { npm_lifecycle_event: 'cli' }, 'scripts/with-node.sh 24 npm run cli'],
  ])('%s stops before loading anything, naming the command that works', (_case, env, command) => {
    const result = spawnSync(SYSTEM_NODE, [BIN, 'keys', 'list'], { cwd: ROOT, encoding: 'utf8', env: { ...cliEnv(), ...env } });

    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`Run it on Node.js 24, which this installs once: ${command}\n`);
  });
});
