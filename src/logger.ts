import pino from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LogLevel } from './config';
import { LogOutput } from './log-output';

/** The one logger type used across the service. */
export type Logger = pino.Logger;

/**
 * Where logs go by default: JSON lines on stderr, human-readable when stderr is a terminal,
 * written asynchronously through a bounded buffer (see LogOutput), so that a line per request
 * never blocks a request and a dead or stuck reader never blocks the service.
 */
function createLogOutput(): LogOutput {
  const format = process.stderr.isTTY ? prettyFactory({ colorize: true, translateTime: 'SYS:HH:MM:ss.l' }) : undefined;
  return new LogOutput({ fd: 2, format });
}

/** Creates the service logger: JSON lines on stderr (or `destination`), never carrying credentials. */
export function createLogger(level: LogLevel = 'info', destination: pino.DestinationStream = createLogOutput()): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'petstore-orders' },
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key'], remove: true },
    },
    destination,
  );
  if (destination instanceof LogOutput) {
    outputs.set(logger, destination);
    destination.onDropsReported = (droppedLines) =>
      logger.warn({ droppedLines }, 'log lines were dropped: the log destination did not keep up');
  }
  return logger;
}

const outputs = new WeakMap<Logger, LogOutput>();

/** The LogOutput a logger writes to, when createLogger gave it one: for its drop counts and its drain on exit. */
export function logOutputOf(logger: Logger): LogOutput | undefined {
  return outputs.get(logger);
}

/** A logger that discards everything, for callers that do not care. */
export const silentLogger: Logger = pino({ level: 'silent' });
