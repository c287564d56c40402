import { tracingChannel } from 'node:diagnostics_channel';
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
  plainLoggers.add(logger);
  if (destination instanceof LogOutput) {
    outputs.set(logger, destination);
    destination.onDropsReported = (droppedLines) =>
      logger.warn({ droppedLines }, 'log lines were dropped: the log destination did not keep up');
  }
  return logger;
}

const outputs = new WeakMap<Logger, LogOutput>();

/** The loggers createLogger made, whose lines are pino's defaults: no mixin, hooks, formatters or serializers of a request line's fields. */
const plainLoggers = new WeakSet<Logger>();

/** What the pipeline logs of every request once its response is over (src/http/pipeline.ts): never a header, so never a key. */
export interface RequestLine {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly apiVersion: string | undefined;
  readonly operationId: string;
  readonly status: number;
  readonly durationMs: number;
  readonly aborted: true | undefined;
}

/** pino's tracing of its serializer: when something traces it, lines go through pino so that it sees them. */
const serializing = tracingChannel('pino_asJson');

/**
 * The writer of a request's log line at `info`, a line per request. For a logger createLogger made,
 * the line is written as pino writes `logger.info(line, 'request')`, byte for byte, without its
 * serializer's general path, which cost a small request a measurable share of its time
 * (docs/performance.md): the fields are known, so the line is one template. The level and the
 * logger's bindings are read at every line, as pino reads them. Any other logger (a child, one
 * made elsewhere) and any line while pino's serializer is traced go through pino itself.
 * tests/request-log.test.ts holds the two to the same bytes.
 */
export function requestLog(logger: Logger): (line: RequestLine) => void {
  const viaPino = (line: RequestLine): void => logger.info(line, 'request');
  const stream = pinoSlot(logger, pino.symbols.streamSym);
  if (!plainLoggers.has(logger) || !isDestination(stream) || pinoSlot(stream, pino.symbols.needsMetadataGsym) === true) return viaPino;
  const bindings = (): string => {
    const chindings = pinoSlot(logger, pino.symbols.chindingsSym);
    return typeof chindings === 'string' ? chindings : '';
  };
  return (line) => {
    if (!logger.isLevelEnabled('info')) return;
    if (serializing.hasSubscribers) return viaPino(line);
    stream.write(
      `{"level":30,"time":${Date.now()}${bindings()},"requestId":${json(line.requestId)},"method":${json(line.method)},"path":${json(line.path)}${
        line.apiVersion === undefined ? '' : `,"apiVersion":${json(line.apiVersion)}`
      },"operationId":${json(line.operationId)},"status":${finite(line.status)},"durationMs":${finite(line.durationMs)}${
        line.aborted === true ? ',"aborted":true' : ''
      },"msg":"request"}\n`,
    );
  };
}

/** One of pino's own fields of a logger or stream, by the symbol pino exports for it. */
function pinoSlot(target: object, symbol: symbol): unknown {
  const value: unknown = Reflect.get(target, symbol);
  return value;
}

function isDestination(stream: unknown): stream is pino.DestinationStream {
  return typeof stream === 'object' && stream !== null && 'write' in stream && typeof stream.write === 'function';
}

/**
 * A string as pino writes it. pino escapes as JSON.stringify does, except that it leaves a lone
 * surrogate as it is; a request line's strings hold none (Node reads a request's path as latin1).
 */
const json = (value: string): string => JSON.stringify(value);

/** A number as pino writes it: null when it is not finite. */
function finite(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** The LogOutput a logger writes to, when createLogger gave it one: for its drop counts and its drain on exit. */
export function logOutputOf(logger: Logger): LogOutput | undefined {
  return outputs.get(logger);
}

/** A logger that discards everything, for callers that do not care. */
export const silentLogger: Logger = pino({ level: 'silent' });
