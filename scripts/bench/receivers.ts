// Webhook receivers for the bench, in a process of their own so that receiving costs the bench's
// load generator nothing: `node receivers.js FAST SLOW` listens on loopback with FAST receivers that
// answer 204 at once and SLOW that never answer, prints their URLs as one JSON line, and runs until
// it is killed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

async function listen(silent: boolean): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!silent) res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

const [fast, slow] = process.argv.slice(2).map(Number);
void (async () => {
  const urls = [
    ...(await Promise.all(Array.from({ length: fast ?? 0 }, () => listen(false)))),
    ...(await Promise.all(Array.from({ length: slow ?? 0 }, () => listen(true)))),
  ];
  process.stdout.write(`${JSON.stringify(urls)}\n`);
})();
