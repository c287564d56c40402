#!/usr/bin/env node
import { importProgressBar } from './progress';
import { runCli } from './program';

void runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: () => process.stdin,
  env: process.env,
  progress: process.stderr.isTTY ? importProgressBar : undefined,
}).then((code) => {
  // `serve` keeps the process alive through its listening socket; every other command ends here.
  process.exitCode = code;
});
