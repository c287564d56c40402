import pino from 'pino';
import type { LogLevel } from './config';

/** The one logger type used across the service. */
export type Logger = pino.Logger;

/** Creates the service logger: JSON lines on stderr (or `destination`), never carrying credentials. */
export function createLogger(level: LogLevel = 'info', destination: pino.DestinationStream = pino.destination(2)): Logger {
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
