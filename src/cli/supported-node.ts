import fs from 'node:fs';

/**
 * Stops a command at once, with a message, on a Node.js older than the project supports: the
 * SQLite driver's binary needs Node-API 10 (Node.js 22.14 or later, package.json's engines.node),
 * and without this check an older Node would crash inside it instead of saying why. Imported first
 * by the bin. From a checkout, the message names the command that works instead.
 */
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  // bin/petstore-orders names itself, and npm names the script that ran the bin (npx names
  // itself), so the advice can repeat the command.
  const event = process.env.npm_lifecycle_event;
  const args = process.argv.slice(2).join(' ');
  const command =
    process.env.PETSTORE_CLI !== undefined
      ? `${process.env.PETSTORE_CLI} ${args}`
      : event === undefined || event === 'npx'
        ? `${event === 'npx' ? 'npx petstore-orders' : 'petstore-orders'} ${args}`
        : ['start', 'test'].includes(event)
          ? `npm ${event}`
          : `npm run ${event}`;
  process.stderr.write(
    `petstore-orders needs Node.js 22.14 or later (the 22 and 24 LTS lines); this is ${process.version}.\n` +
      (fs.existsSync('scripts/with-node.sh')
        ? `Run it on Node.js 24, which this installs once: scripts/with-node.sh 24 ${command.trim()}\n`
        : 'Install Node.js 22 or 24, then run it again.\n'),
  );
  process.exit(1);
}
