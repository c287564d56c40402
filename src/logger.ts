import pino from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from './config';

/** The one logger type used across the service. */
export type Logger = pino.Logger;

/**
 * Where logs go by default: JSON lines on stderr, written asynchronously so that a line per
 * request never blocks a request (pino flushes them on exit); human-readable lines when stderr
 * is a terminal.
 */
function defaultDestination(): pino.DestinationStream {
  if (process.stderr.isTTY) return pretty({ destination: 2, colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l' });
  return pino.destination({ dest: 2, sync: false });
}

/** Creates the service logger: JSON lines on stderr (or `destination`), never carrying credentials. */
export function createLogger(level: LogLevel = 'info', destination: pino.DestinationStream = defaultDestination()): Logger {
  return pino(
    {
      level,
      base: { service: 'petstore-orders' },
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key'], remove: true },
    },
    destination,
  );
}

/** A logger that discards everything, for callers that do not care. */
export const silentLogger: Logger = pino({ level: 'silent' });
