import fs from 'node:fs';

/** Why a log line was not written: the buffer was full (a reader that does not read), or the destination failed. */
export type DropReason = 'full' | 'failed';

/** Options of a {@link LogOutput}. */
export interface LogOutputOptions {
  /** The file descriptor to write to (default 2, stderr). */
  fd?: number;
  /** Most characters held while the destination is slow; lines past it are dropped (default 1 MiB). */
  maxBufferedChars?: number;
  /** Turns each line into what is written, e.g. a human-readable form for a terminal. */
  format?: (line: string) => string;
}

/** How long to wait before writing again to a destination that said EAGAIN. */
const RETRY_MS = 20;
/** Most bytes handed to one write. */
const MAX_WRITE = 64 * 1024;
/**
 * How long a line waits for others to share its write. A write per line (a request each, under
 * load) cost a system call, a thread hand-off and a wake-up of the reader per request: more than
 * the rest of the request's logging together. A person reading the log does not see the wait.
 */
const LINGER_MS = 10;
/** Queued characters that start a write at once, without waiting out the linger. */
const BATCH_CHARS = 16 * 1024;

/**
 * Where the service's log lines go: a file descriptor written asynchronously, through a bounded
 * buffer, so that the log never holds the service hostage.
 *
 * - A destination that fails (a reader that died: EPIPE; a closed descriptor: EBADF; a full disk)
 *   is never fatal: logging stops and every later line is counted as dropped (`failed`).
 * - A destination that is alive but does not read (a full pipe) blocks nothing: lines wait in a
 *   buffer of at most `maxBufferedChars`, and lines past it are dropped and counted (`full`). When
 *   the destination has caught up, `onDropsReported` is called once with how many were lost.
 * - `drain(timeoutMs)` waits for what is buffered, but never longer than it is told: a shutdown
 *   cannot hang on its logs. Nothing here ever writes synchronously, so no exit handler can block.
 * - Lines are written in batches: a line waits at most LINGER_MS for others to share its write.
 *   The wait keeps the process alive, so a command that ends on its own never loses its last lines.
 */
export class LogOutput {
  readonly #fd: number;
  readonly #maxBufferedChars: number;
  readonly #format: ((line: string) => string) | undefined;
  #queue: string[] = [];
  #bufferedChars = 0;
  #writing = false;
  #linger: NodeJS.Timeout | undefined;
  #failure: string | undefined;
  #unreported = 0;
  readonly #dropped: Record<DropReason, number> = { full: 0, failed: 0 };
  readonly #idle: Array<() => void> = [];
  /** Called once the destination has caught up after dropping lines, with how many were dropped. */
  onDropsReported: ((dropped: number) => void) | undefined;

  constructor(options: LogOutputOptions = {}) {
    this.#fd = options.fd ?? 2;
    this.#maxBufferedChars = options.maxBufferedChars ?? 1024 * 1024;
    this.#format = options.format;
  }

  /** Lines dropped so far, by reason. */
  get dropped(): Readonly<Record<DropReason, number>> {
    return this.#dropped;
  }

  /** The error code that stopped logging, if one did. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** Queues one line (pino calls this); never throws and never blocks. */
  write(line: string): void {
    if (this.#failure !== undefined) {
      this.#dropped.failed += 1;
      return;
    }
    const text = this.#formatted(line);
    if (this.#bufferedChars + text.length > this.#maxBufferedChars) {
      this.#dropped.full += 1;
      this.#unreported += 1;
      return;
    }
    this.#queue.push(text);
    this.#bufferedChars += text.length;
    if (this.#writing) return;
    if (this.#bufferedChars >= BATCH_CHARS) this.#writeNext();
    else this.#linger ??= setTimeout(() => this.#writeNext(), LINGER_MS);
  }

  /** pino's flush: writes what waits for its batch at once, and calls back when idle or after a second. */
  flush(callback?: (err?: Error) => void): void {
    void this.drain(1000).then(() => callback?.());
  }

  /** Resolves once everything buffered is written, logging has failed, or `timeoutMs` has passed. */
  drain(timeoutMs: number): Promise<void> {
    if (!this.#writing && this.#queue.length > 0) this.#writeNext();
    if (!this.#writing) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#idle.push(done);
    });
  }

  #formatted(line: string): string {
    if (this.#format === undefined) return line;
    try {
      return this.#format(line);
    } catch {
      return line;
    }
  }

  #writeNext(): void {
    clearTimeout(this.#linger);
    this.#linger = undefined;
    const lines = this.#queue;
    this.#queue = [];
    const chars = lines.reduce((sum, line) => sum + line.length, 0);
    this.#writing = true;
    this.#writeBuffer(Buffer.from(lines.join(''), 'utf8'), chars, lines.length);
  }

  #writeBuffer(buffer: Buffer, chars: number, lines: number): void {
    const length = Math.min(buffer.length, MAX_WRITE);
    fs.write(this.#fd, buffer, 0, length, null, (err, written) => {
      if (err) {
        if (err.code === 'EAGAIN' || err.code === 'EWOULDBLOCK' || err.code === 'EINTR') {
          setTimeout(() => this.#writeBuffer(buffer, chars, lines), RETRY_MS).unref();
          return;
        }
        this.#fail(err.code ?? err.message, lines);
        return;
      }
      if (written < buffer.length) {
        this.#writeBuffer(buffer.subarray(written), chars, lines);
        return;
      }
      this.#bufferedChars -= chars;
      this.#writing = false;
      if (this.#queue.length > 0) {
        // What queued meanwhile waits for its batch, as lines do when nothing is being written:
        // written at once after each write, a busy server's lines went a few at a time.
        if (this.#bufferedChars >= BATCH_CHARS || this.#idle.length > 0) this.#writeNext();
        else this.#linger ??= setTimeout(() => this.#writeNext(), LINGER_MS);
        return;
      }
      if (this.#unreported > 0) {
        const dropped = this.#unreported;
        this.#unreported = 0;
        this.onDropsReported?.(dropped);
      }
      if (!this.#writing) for (const done of this.#idle.splice(0)) done();
    });
  }

  /** Logging stops for good: what was buffered is dropped with everything that follows. */
  #fail(code: string, inFlightLines: number): void {
    clearTimeout(this.#linger);
    this.#linger = undefined;
    this.#failure = code;
    this.#dropped.failed += inFlightLines + this.#queue.length;
    this.#queue = [];
    this.#bufferedChars = 0;
    this.#writing = false;
    for (const done of this.#idle.splice(0)) done();
  }
}
