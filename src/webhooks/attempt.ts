import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedAddresses } from './addresses';
import { ATTEMPT_TIMEOUT_MS, retryAfterMs } from './schedule';

/** The most of an answer's body that is read (then the connection is let go): a receiver's reply is not ours to store. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** What one attempt came to: the receiver's status, or the error when there was none; and how long it took. */
export interface AttemptResult {
  /** The status the receiver answered, when it answered. */
  readonly status?: number;
  /** Why there was no answer: a refused connection, a timeout, a TLS failure. */
  readonly error?: string;
  readonly durationMs: number;
  /** What a `429` or `503` asked for with Retry-After, in milliseconds. */
  readonly retryAfterMs?: number;
}

/** Whether an attempt delivered its event: a 2xx. A redirect is not followed, and is a failure. */
export function delivered(result: AttemptResult): boolean {
  return result.status !== undefined && result.status >= 200 && result.status < 300;
}

/** One attempt: where to, what to send, and its limits. */
export interface Attempt {
  readonly url: URL;
  /** The addresses checked for this attempt (addresses.ts): the connection goes to one of them, never to a fresh lookup. */
  readonly addresses: CheckedAddresses;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs?: number;
  /**
   * The connections to keep open between attempts to one endpoint (its worker's), so that a
   * receiver taking a stream of events is not connected to anew for each; none: a connection per attempt.
   */
  readonly agent?: http.Agent | undefined;
}

/** A keep-alive agent for one endpoint's attempts: one connection at a time, as its worker makes one attempt at a time. */
export function endpointAgent(url: URL): http.Agent {
  const options = { keepAlive: true, maxSockets: 1, keepAliveMsecs: 1000 };
  return url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

/**
 * POSTs one event to an endpoint, once. The connection goes to the addresses checked before the
 * attempt (a pinned lookup), so a name that changes its answer in between cannot send it elsewhere;
 * TLS still checks the certificate against the URL's host. Never throws: every failure is a result.
 */
export function attempt({ url, addresses, headers, body, timeoutMs = ATTEMPT_TIMEOUT_MS, agent }: Attempt): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round((performance.now() - started) * 10) / 10;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    const [first] = addresses;
    if (options.all === true)
      callback(
        null,
        addresses.map(({ address, family }) => ({ address, family })),
      );
    else callback(null, first.address, first.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const settle = (result: AttemptResult): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const request = transport.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        // A kept connection goes to an address checked when it was made; every attempt checks again first.
        agent: agent ?? false,
        headers: {
          ...headers,
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          'User-Agent': 'petstore-orders-webhooks',
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const asked = status === 429 || status === 503 ? retryAfterMs(response.headers['retry-after'], Date.now()) : undefined;
        // The answer's body is read up to a bound and dropped, so the connection closes cleanly.
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        response.on('error', () => undefined);
        // The timer stays set until the answer is over: a receiver that trickles its body is cut at the same bound.
        response.on('close', () => clearTimeout(timer));
        settle({ status, durationMs: elapsed(), ...(asked === undefined ? {} : { retryAfterMs: asked }) });
        response.resume();
      },
    );
    const timer = setTimeout(() => {
      settle({ error: `no answer within ${timeoutMs / 1000} s`, durationMs: elapsed() });
      request.destroy();
    }, timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      settle({ error: err.code ?? err.message, durationMs: elapsed() });
    });
    request.end(body);
  });
}
