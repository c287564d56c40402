import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppDeps } from '../../src/app';
import type { ApiVersion, OperationIdOf } from '../../src/contract/types';
import { defineHandler, type HandlerDefinitions } from '../../src/http/define-handler';
import { createHttpServer } from '../../src/server';

/** A real listening server on an ephemeral port around a fresh app, for tests that need concurrency. */
export async function listen(deps: AppDeps): Promise<{ url: string; server: http.Server; close: () => Promise<void> }> {
  const server = createHttpServer(await createApp(deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * GETs `url` and reads the response to its end or until the connection closes: its status (none if
 * the connection was cut before the head) and whether the body completed.
 */
export function readToEnd(url: string, headers: Record<string, string>): Promise<{ status?: number; complete: boolean }> {
  return new Promise((resolve) => {
    http
      .get(url, { headers }, (response) => {
        let complete = false;
        response.resume();
        response.on('end', () => (complete = true));
        response.on('error', () => undefined);
        response.on('close', () => resolve({ status: response.statusCode!, complete }));
      })
      .on('error', () => resolve({ complete: false }));
  });
}

/**
 * What `npm run scaffold` writes for each of `operationIds` of `version`, before anyone implements
 * it: a handler module answering its mock. The ids may be ones the project's own documents lack
 * (an operation a test adds), so they are taken as the version's.
 */
export function scaffoldedHandlers<V extends ApiVersion>(version: V, ...operationIds: string[]): Partial<HandlerDefinitions<V>> {
  return Object.fromEntries(
    operationIds.map((id) => [id, defineHandler(version, id as OperationIdOf<V>, ({ mock }) => mock)]),
  ) as unknown as Partial<HandlerDefinitions<V>>;
}
