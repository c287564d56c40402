import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppDeps } from '../../src/app';
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
