// Run by npm before it installs this project (`preinstall`), on whatever Node.js the user has: it
// stops the install with the command that works instead when that Node.js is older than the one
// package.json's engines.node names. Plain CommonJS with no dependencies, since it runs before any.
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const wanted = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node;
const [, minMajor, minMinor] = /^>=(\d+)\.(\d+)$/.exec(wanted) ?? [];
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < Number(minMajor) || (major === Number(minMajor) && minor < Number(minMinor))) {
  const command = process.env.npm_command === 'ci' ? 'npm ci' : 'npm install';
  process.stderr.write(
    `\npetstore-orders needs Node.js ${minMajor}.${minMinor} or later (the 22 and 24 LTS lines); this is ${process.version}.\n` +
      (fs.existsSync(path.join(root, 'scripts', 'with-node.sh'))
        ? `Run it on Node.js 24, which this installs once: scripts/with-node.sh 24 ${command}\n` +
          'and put scripts/with-node.sh 24 before every npm command of the README.\n\n'
        : 'Install Node.js 22 or 24, then run the install again.\n\n'),
  );
  process.exit(1);
}
