/**
 * Stops a command at once, with a message, on a Node.js older than the project supports: the
 * SQLite driver's binary needs Node-API 10 (Node.js 22.14 or later), and without this check an
 * older Node would crash inside it instead of saying why. Imported first by the bin.
 */
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  process.stderr.write(
    `petstore-orders needs Node.js 22.14 or later (the 22 and 24 LTS lines); this is ${process.version}. ` +
      'From a checkout, scripts/with-node.sh 24 <command> runs a command on Node.js 24.\n',
  );
  process.exit(1);
}
