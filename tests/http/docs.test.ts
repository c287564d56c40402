import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadDocument, specPath } from '../../src/contract/document';
import type { Store } from '../../src/store';
import { listen } from '../helpers/app';
import { addKey, freshStore, order } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';
import { ROOT } from '../helpers/project';

/**
 * How long the page may take to render a version: Swagger UI lays out every operation of v3 at
 * once (docExpansion: full), which takes seconds on a slow machine under a full test run. Each
 * wait ends as soon as what it waits for is there.
 */
const RENDER_MS = 90_000;

// The API reference page in a real browser: Debian's chromium, headless, with no network but ours.
const CHROMIUM = process.env.PETSTORE_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.PETSTORE_TEST_BROWSER === 'required';
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const present = fs.existsSync(CHROMIUM);
if (!present && !REQUIRED) {
  process.stdout.write(
    `docs browser test skipped: no browser at ${CHROMIUM} (apt-get install --no-install-recommends chromium, or set PETSTORE_CHROMIUM)\n`,
  );
}

(present || REQUIRED ? describe : describe.skip)('GET /docs in a browser', () => {
  const tmp = tempDir();
  let store: Store;
  let server: Awaited<ReturnType<typeof listen>>;
  let browser: Browser;
  // One page, loaded once: Swagger UI takes seconds to lay out v3. The tests below read it in
  // order: v3 as it first shows, then its "Try it out", then v1 chosen in the top bar.
  let page: Page;
  let response: Awaited<ReturnType<Page['goto']>>;
  /** Every URL the page asked for, and those not served by this server, which are refused. */
  const called: string[] = [];
  const elsewhere: string[] = [];
  beforeAll(async () => {
    ({ store } = freshStore(tmp.dir));
    await addKey(store);
    await store.importOrders([order({ id: 1 })]);
    server = await listen({ store });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
    page.on('request', (request) => called.push(request.url()));
    // Offline: anything not served by this server is refused, and noted.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(server.url)) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    response = await page.goto(`${server.url}/docs`);
    await page.waitForSelector('.opblock-summary-path', { timeout: RENDER_MS });
    // Read once the last operation's summary is there: blocks can appear before their text.
    await page.locator('.opblock-summary').filter({ hasText: 'Cancel a pending order' }).first().waitFor({ timeout: RENDER_MS });
  }, 2 * RENDER_MS);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await store?.close();
    tmp.cleanup();
  });

  test('shows v3 first, with its operations and webhooks, offline', async () => {
    const v3 = await page.locator('body').innerText();
    const v3Paths = await page.locator('.opblock-summary-path').allInnerTexts();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs-v3.png') });

    expect(response?.status()).toBe(200);
    expect(elsewhere).toEqual([]);
    expect(v3).toContain(loadDocument(specPath('v3')).info.version);
    expect(v3).toContain('Place an order, exactly once');
    expect(v3).toContain('Read one order');
    expect(v3).toContain('Read what changed');
    expect(v3).toContain('nextCursor');
    expect(v3).toContain('shipDateFrom');
    expect(v3).toContain('insufficient_scope');
    expect(v3).toContain('RateLimit-Policy');
    expect(v3Paths).toEqual([
      '/store/orders',
      '/store/orders',
      '/store/orders/{orderId}',
      '/store/orders/{orderId}',
      '/store/orders/{orderId}/ship',
      '/store/order-events',
      // 3.2's webhook endpoint operations, then the webhooks it sends, each named by its event type.
      '/webhook-endpoints',
      '/webhook-endpoints',
      '/webhook-endpoints/{endpointId}',
      '/webhook-endpoints/{endpointId}',
      '/webhook-endpoints/{endpointId}',
      '/webhook-endpoints/{endpointId}/rotate-secret',
      '/webhook-endpoints/{endpointId}/deliveries',
      '/webhook-endpoints/{endpointId}/replay',
      'order.created',
      'order.shipped',
      'order.cancelled',
    ]);
  });

  test(
    '"Try it out" calls the deployment that serves the page, not the document\'s example server',
    async () => {
      const servers = await page.locator('.servers select option').allInnerTexts();
      // Every operation is open (docExpansion: full): its "Try it out", then "Execute".
      await page.locator('.opblock-get').first().locator('button.try-out__btn').click();
      await page.locator('.opblock-get').first().locator('button.execute').click();
      await page.waitForSelector('.opblock-get .live-responses-table', { timeout: RENDER_MS });
      const answered = await page.locator('.opblock-get .live-responses-table').first().innerText();

      expect(servers[0]).toBe('../../v3 - This deployment');
      expect(called.filter((url) => url.startsWith(`${server.url}/v3/store/orders?limit=100&status=pending`))).toHaveLength(1);
      expect(called.some((url) => url.includes('localhost:8080'))).toBe(false);
      expect(elsewhere).toEqual([]);
      // No key was given: this deployment's own 401, with its Error.
      expect(answered).toContain('401');
      expect(answered).toContain('unauthorized');
    },
    2 * RENDER_MS,
  );

  test(
    'v1, chosen in the top bar, shows its deprecated getPetById, the bearer scheme and the Error object, offline',
    async () => {
      await page.locator('.topbar select').selectOption({ label: 'v1 (1.0.2)' });
      // Read once the deprecated operation shows its sunset date: the block appears before its text is rendered.
      await page.locator('.opblock-deprecated').filter({ hasText: '2027-06-30' }).first().waitFor({ timeout: RENDER_MS });
      await page.waitForSelector('.models', { timeout: RENDER_MS });
      const v1 = await page.locator('body').innerText();
      const deprecated = await page.locator('.opblock-deprecated').allInnerTexts();
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'docs.png') });
      // The bearer scheme, as the Authorize dialog presents it.
      await page.locator('button.authorize').first().click();
      const scheme = await page.locator('.modal-ux').innerText();

      expect(elsewhere).toEqual([]);
      expect(v1).toContain('Petstore Store Orders API');
      expect(v1).toContain('/store/orders/{orderId}');
      expect(v1).toContain('listOrders');
      expect(v1).toContain('cancelOrder');
      expect(scheme).toContain('bearerAuth');
      expect(scheme).toMatch(/http, Bearer/);
      expect(v1).toContain('Error');
      expect(deprecated.join('\n')).toContain('/pets/{petId}');
      expect(deprecated.join('\n')).toContain('2027-06-30');
      expect(fs.statSync(path.join(ARTIFACTS, 'docs.png')).size).toBeGreaterThan(10_000);
    },
    2 * RENDER_MS,
  );
});

test('the docs page and its assets are served from the package, without a key', async () => {
  const tmp = tempDir();
  const { store } = freshStore(tmp.dir);
  const server = await listen({ store });
  try {
    const page = await fetch(`${server.url}/docs`);
    const html = await page.text();
    const scripts = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    const assets = await Promise.all(scripts.map((asset) => fetch(`${server.url}/${asset}`)));

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(scripts.every((asset) => !/^https?:/.test(asset))).toBe(true);
    expect(assets.map((res) => res.status)).toEqual(scripts.map(() => 200));
    expect((await fetch(`${server.url}/docs/assets/package.json`)).status).toBe(404);
    // What the page shows: each version's document, this deployment first among its servers, nothing else changed.
    for (const version of ['v1', 'v2', 'v3']) {
      const shown = (await (await fetch(`${server.url}/docs/openapi/${version}.json`)).json()) as { servers: Array<{ url: string }> };
      const served = (await (await fetch(`${server.url}/${version}/openapi.json`)).json()) as { servers: Array<{ url: string }> };
      expect(shown.servers[0]).toEqual({ url: `../../${version}`, description: 'This deployment' });
      expect({ ...shown, servers: served.servers.filter((s) => /^https?:/.test(s.url)) }).toEqual({
        ...served,
        servers: shown.servers.slice(1),
      });
    }
    expect((await fetch(`${server.url}/docs/openapi/v9.json`)).status).toBe(404);
    // With a trailing slash the page's relative assets would resolve under /docs/docs/: it is sent to /docs.
    const slashed = await fetch(`${server.url}/docs/?x=1`, { redirect: 'manual' });
    expect(slashed.status).toBe(301);
    expect(new URL(slashed.headers.get('location')!, `${server.url}/docs/`).href).toBe(`${server.url}/docs?x=1`);
  } finally {
    await server.close();
    await store.close();
    tmp.cleanup();
  }
});
