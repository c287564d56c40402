#!/usr/bin/env node
// First, before anything loads the SQLite driver.
import './supported-node';
import './compile-cache';
import type { Writable } from 'node:stream';
import { runCli } from './program';

// A reader that went away (EPIPE) must never crash a command or the server: a failed write is
// reported to the command that made it, which decides what it means (see runCli).
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

/** Writes to a standard stream; rejects when the text could not be written. */
function writer(stream: Writable): (text: string) => Promise<void> {
  return (text) =>
    new Promise((resolve, reject) => {
      if (stream.destroyed || !stream.writable) {
        reject(Object.assign(new Error('the output is closed'), { code: 'EPIPE' }));
        return;
      }
      stream.write(text, (err) => (err ? reject(err) : resolve()));
    });
}

void runCli(process.argv.slice(2), {
  stdout: writer(process.stdout),
  stderr: writer(process.stderr),
  stdin: () => process.stdin,
  env: process.env,
  // Loaded only for an import on a terminal, like every module a command alone needs: `serve`
  // starts sooner for not loading them.
  progress: process.stderr.isTTY ? async (input) => (await import('./progress')).importProgressBar(input) : undefined,
}).then((code) => {
  // `serve` keeps the process alive through its listening socket; every other command ends here.
  process.exitCode = code;
});
