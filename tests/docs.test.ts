import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { Store } from '../src/store';
import { listen } from './helpers/app';
import { addKey, freshStore, order, tempDir } from './helpers/store';

// The API reference page in a real browser: Debian's chromium, headless, with no network but ours.
const CHROMIUM = process.env.PETSTORE_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.PETSTORE_TEST_BROWSER === 'required';
const ARTIFACTS = path.join(__dirname, '..', 'test-artifacts');
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
  beforeAll(async () => {
    ({ store } = freshStore(tmp.dir));
    await addKey(store);
    await store.importOrders([order({ id: 1 })]);
    server = await listen({ store });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await store?.close();
    tmp.cleanup();
  });

  test('shows both operations, the bearer scheme, the Error object and the deprecated getPetById with its sunset, offline', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
    const elsewhere: string[] = [];
    // Offline: anything not served by this server is refused, and noted.
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(server.url)) return route.continue();
      elsewhere.push(route.request().url());
      return route.abort();
    });

    const response = await page.goto(`${server.url}/docs`);
    await page.waitForSelector('.opblock-summary-path', { timeout: 15000 });
    await page.waitForSelector('.models', { timeout: 15000 });
    const text = await page.locator('body').innerText();
    const deprecated = await page.locator('.opblock-deprecated').allInnerTexts();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs.png'), fullPage: true });
    // The bearer scheme, as the Authorize dialog presents it.
    await page.locator('button.authorize').first().click();
    const scheme = await page.locator('.modal-ux').innerText();

    expect(response?.status()).toBe(200);
    expect(elsewhere).toEqual([]);
    expect(text).toContain('Petstore Store Orders API');
    expect(text).toContain('/store/orders');
    expect(text).toContain('/store/orders/{orderId}');
    expect(text).toContain('listOrders');
    expect(text).toContain('cancelOrder');
    expect(text).toContain('Authorize');
    expect(scheme).toContain('bearerAuth');
    expect(scheme).toMatch(/http, Bearer/);
    expect(text).toContain('Error');
    expect(deprecated.join('\n')).toContain('/pets/{petId}');
    expect(deprecated.join('\n')).toContain('2027-06-30');
    expect(fs.statSync(path.join(ARTIFACTS, 'docs.png')).size).toBeGreaterThan(10_000);
  });
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
  } finally {
    await server.close();
    await store.close();
    tmp.cleanup();
  }
});
