import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, loadConfig, serviceOptionsOf, type Config } from '../config';
import {
  documentOperations,
  documentVersions,
  isApiVersion,
  isOpenApiDocument,
  loadDocument,
  loadServedDocuments,
  parseDocumentText,
  specPath,
} from '../contract/document';
import { scopesOf } from '../contract/scopes';
import { errorCode, errorMessage } from '../thrown';
import type { OpenAPIV3 } from 'openapi-types';
import { idProblem, parseId } from '../ids';
import { DEFAULT_SCOPES, expiryOf, generateKey, hashKey, keyNameProblem, laterBy, parseScopes, type ExpiryOptions } from '../keys';
import { DEMO_POLICIES, seedDemo } from '../demo';
import { commaList } from '../comma-list';
import { formatPolicies, parsePolicies } from '../rate-policy';
import {
  DuplicateKeyNameError,
  openStore,
  storeLocation,
  WEBHOOK_EVENT_TYPES,
  type KeyPolicies,
  type Store,
  type WebhookEventType,
} from '../store';
import { createEndpoint, deliveryPage, endpointPage, updateEndpoint, type EndpointView } from '../webhooks/endpoints';
import { isDateTime } from '../date-time';

/**
 * Where the CLI reads and writes; injected so that tests can capture it. A writer may return a
 * promise that rejects when the text could not be written (its reader has gone away).
 */
export interface CliIO {
  stdout: (text: string) => void | Promise<void>;
  stderr: (text: string) => void | Promise<void>;
  stdin: () => Readable;
  env: NodeJS.ProcessEnv;
  /** A progress display for a long import, when there is a terminal to show it on (loaded when first needed). */
  progress?: (input: ImportInput) => ImportProgress | Promise<ImportProgress>;
}

/** An import's progress display: told how many records are in, and stopped at the end. */
export interface ImportProgress {
  update: (records: number) => void;
  stop: () => void;
}

/** A failure the operator caused; printed as one line, exit status 1. */
class CliError extends Error {
  override name = 'CliError';
}

/** What `parse` makes of an option's value; its Error, which names the option and the value, as a CliError. */
function parsedOption<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new CliError(errorMessage(err));
  }
}

/** The scopes a `--scopes` option names, of those the served documents declare. */
function scopesOption(value: string): string[] {
  return parsedOption(() => parseScopes('--scopes', value, scopesOf(loadServedDocuments())));
}

/**
 * What `--rate-limit` options give, each one policy or a comma-separated list of them, as
 * PETSTORE_RATE_LIMIT takes: the policies as a key stores them (`default`: null, the deployment's).
 */
function rateLimitOption(given: readonly string[]): KeyPolicies {
  const values = parsedOption(() => given.flatMap((value) => commaList('--rate-limit', value, 'policy')));
  if (values.length === 1 && values[0] === DEFAULT_LIMIT) return null;
  if (values.includes(DEFAULT_LIMIT)) throw new CliError(`--rate-limit ${DEFAULT_LIMIT} cannot be given with a policy`);
  return parsedOption(() => parsePolicies('--rate-limit', values));
}

/** A key's policies as `keys` commands print them. */
const policiesText = (policies: KeyPolicies): string => (policies === null ? DEFAULT_LIMIT : formatPolicies(policies));

/** `--rate-limit default`: the key follows the deployment's policies (PETSTORE_RATE_LIMIT). */
const DEFAULT_LIMIT = 'default';

/** Collects a repeatable option's values, in order. */
const repeated = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Builds the `petstore-orders` command tree. */
function buildProgram(io: CliIO): Command {
  const program = new Command('petstore-orders')
    .description(`Petstore Store Orders API (${documentVersions().join(', ')}): the server and its operator commands`)
    .option('--db <path>', 'SQLite database file (default: $PETSTORE_DB, else ./data/petstore.db)')
    .configureOutput({
      writeOut: (text) => void ignoreLostOutput(io.stdout(text)),
      writeErr: (text) => void ignoreLostOutput(io.stderr(text)),
    })
    .exitOverride()
    .showHelpAfterError();

  const config = (overrides: { port?: string; host?: string } = {}): Config =>
    loadConfig(io.env, { dbPath: program.opts<{ db?: string }>().db, ...overrides });

  program
    .command('serve')
    .description(
      `serve every version of the API, each under its prefix (/${documentVersions().join(', /')}), with /healthz, /readyz and /docs beside it`,
    )
    .option('--port <port>', 'port to listen on (default: $PORT, else 8080)')
    .option('--host <host>', 'address to listen on (default: $HOST, else 127.0.0.1)')
    .addOption(new Option('--demo', 'seed demo orders and a demo key into an empty store (ignored in production)'))
    .action(async (options: { port?: string; host?: string; demo?: boolean }) => {
      const cfg = config({ port: options.port, host: options.host });
      // The server and its logger are loaded only to serve: every other command starts sooner for
      // not loading the HTTP stack, the validators and the metrics.
      const [{ SERVE_V8_FLAGS, closeOnSignals, exitOnFatalErrors, setServeV8Flags, startServer }, { createLogger }] = await Promise.all([
        import('../server'),
        import('../logger'),
      ]);
      setServeV8Flags();
      const logger = createLogger(cfg.logLevel);
      exitOnFatalErrors(logger);
      const store = await openStore(cfg, logger);
      const server = await startServer({
        store,
        logger,
        host: cfg.host,
        port: cfg.port,
        reusePort: cfg.reusePort,
        shutdownTimeoutMs: cfg.shutdownTimeoutMs,
        limits: cfg.limits,
        metricsToken: cfg.metricsToken,
        feed: cfg.feed,
        storeConfig: cfg,
        // A demo's webhook receivers are on the same machine: http and loopback are allowed.
        service:
          options.demo && !cfg.production
            ? { ...serviceOptionsOf(cfg), webhooks: { ...cfg.webhooks, allowHttp: true, allowPrivate: true } }
            : serviceOptionsOf(cfg),
      });
      closeOnSignals(server, logger, cfg.shutdownTimeoutMs);
      // Seeded once the server listens: a key made by a server that then could not listen would
      // never be shown, and later runs would say it had been.
      const demoKey = options.demo && !cfg.production ? await seedDemo(store) : null;
      logger.info({ url: server.url, db: storeLocation(cfg), v8Flags: SERVE_V8_FLAGS }, 'listening');
      if (options.demo && !cfg.production) {
        // A courtesy: a server whose stdout is gone keeps serving.
        await ignoreLostOutput(io.stdout(demoBanner(server.url, storeLocation(cfg), demoKey, cfg.cliCommand)));
      }
    });

  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create a key and print it, alone, on stdout; it is shown only this once')
    .requiredOption('--name <name>', 'a unique name for the key')
    .option('--scopes <list>', `what the key may do, comma-separated (default: ${DEFAULT_SCOPES.join(',')})`)
    .option('--expires-in <duration>', 'the key stops working this long from now: a whole number with s, m, h or d (90d)')
    .option('--expires-at <date-time>', 'the key stops working at this RFC 3339 date-time')
    .option(
      '--rate-limit <policy>',
      'at most N requests per s, min, h or day (600/min), repeatable or comma-separated: every policy applies; none: no limit (default: $PETSTORE_RATE_LIMIT)',
      repeated,
    )
    .action(async (options: { name: string; scopes?: string; rateLimit?: string[] } & ExpiryOptions) => {
      const problem = keyNameProblem(options.name);
      if (problem) throw new CliError(problem);
      const expiresAt = parsedOption(() => expiryOf(options, new Date()));
      const scopes = options.scopes === undefined ? DEFAULT_SCOPES : scopesOption(options.scopes);
      const policies = options.rateLimit === undefined ? null : rateLimitOption(options.rateLimit);
      const key = generateKey();
      await withStore(config(), async (store) => {
        try {
          await store.createKey(options.name, hashKey(key), { expiresAt, scopes, policies });
        } catch (err) {
          if (err instanceof DuplicateKeyNameError) throw new CliError(`--name: ${err.message}`);
          throw err;
        }
        try {
          await io.stdout(`${key}\n`);
        } catch (err) {
          // Nobody saw the key, so nobody can use it; a key that may have been read in part must not stay valid.
          await store.revokeKey(options.name);
          throw new CliError(
            `the key could not be written to stdout (${codeOrMessage(err)}); it was revoked, create another with a new --name`,
          );
        }
      });
    });
  keys
    .command('update')
    .description("change a key's scopes, expiry or rate limit; the change holds from the key's next request, in every instance")
    .argument('<name>', 'name of the key')
    .option('--scopes <list>', 'what the key may do from now on, comma-separated: all of it')
    .option('--expires-in <duration>', 'the key stops working this long from now: a whole number with s, m, h or d (90d)')
    .option('--expires-at <date-time>', 'the key stops working at this RFC 3339 date-time')
    .option('--no-expiry', 'the key never expires')
    .option(
      '--rate-limit <policy>',
      "the key's policies from now on, all of them (600/min), repeatable or comma-separated; none: no limit; default: $PETSTORE_RATE_LIMIT",
      repeated,
    )
    .action(async (name: string, options: { expiry?: boolean; scopes?: string; rateLimit?: string[] } & ExpiryOptions) => {
      // commander gives `--no-expiry` as `expiry: false`.
      const expiresAt = parsedOption(() => expiryOf({ ...options, noExpiry: options.expiry === false }, new Date()));
      const scopes = options.scopes === undefined ? undefined : scopesOption(options.scopes);
      const policies = options.rateLimit === undefined ? undefined : rateLimitOption(options.rateLimit);
      if (expiresAt === undefined && scopes === undefined && policies === undefined) {
        throw new CliError('nothing to change: give --scopes, --expires-in, --expires-at, --no-expiry or --rate-limit');
      }
      const updated = await withStore(config(), (store) => store.updateKey(name, { expiresAt, scopes, policies }));
      if (!updated) throw new CliError(`NAME: no active key is named "${name}"`);
      const changed = [
        scopes === undefined ? undefined : `scopes ${scopes.join(',')}`,
        expiresAt === undefined ? undefined : expiresAt === null ? 'no expiry' : `expires at ${expiresAt}`,
        policies === undefined ? undefined : `rate limit ${policiesText(policies)}`,
      ].filter((part) => part !== undefined);
      await io.stdout(`updated ${name}: ${changed.join('; ')}\n`);
    });
  keys
    .command('rotate')
    .description('print a new key, alone, on stdout, for the same name, scopes and expiry; the old one works until the grace ends')
    .argument('<name>', 'name of the key')
    .option('--grace <duration>', 'how long the old key keeps working: a whole number with s, m, h or d', '24h')
    .action(async (name: string, options: { grace: string }) => {
      const graceUntil = parsedOption(() => laterBy('--grace', options.grace, new Date(), 0));
      const key = generateKey();
      await withStore(config(), async (store) => {
        if (!(await store.rotateKey(name, hashKey(key), graceUntil))) throw new CliError(`NAME: no active key is named "${name}"`);
        try {
          await io.stdout(`${key}\n`);
        } catch (err) {
          // Nobody saw the new key, so nobody can use it; one that may have been read in part must not stay valid.
          await store.undoRotation(name, hashKey(key));
          throw new CliError(`the new key could not be written to stdout (${codeOrMessage(err)}); the key "${name}" was not rotated`);
        }
      });
    });
  keys
    .command('list')
    .description(
      'list key names with their scopes, rate limits, creation, expiry and revocation dates, and until when a rotated-out key still works (never the keys)',
    )
    .action(async () => {
      const rows = await withStore(config(), (store) => store.listKeys());
      const now = new Date().toISOString();
      // A replaced secret whose grace has ended works no more: it is not worth a column's value.
      const inGrace = (until: string | null) => (until !== null && until > now ? until : '-');
      await io.stdout(
        [
          'NAME\tSCOPES\tRATE LIMIT\tCREATED\tEXPIRES\tREVOKED\tOLD KEY UNTIL',
          ...rows.map(
            (k) =>
              `${k.name}\t${k.scopes.join(',')}\t${policiesText(k.policies)}\t${k.createdAt}\t${k.expiresAt ?? '-'}\t${k.revokedAt ?? '-'}\t${inGrace(k.previousUntil)}`,
          ),
        ].join('\n') + '\n',
      );
    });
  keys
    .command('revoke')
    .description('revoke a key; the next request that uses it gets 401')
    .argument('<name>', 'name of the key')
    .action(async (name: string) => {
      const revoked = await withStore(config(), (store) => store.revokeKey(name));
      if (!revoked) throw new CliError(`NAME: no active key is named "${name}"`);
      await io.stdout(`revoked ${name}\n`);
    });

  const webhooks = program.command('webhooks').description('manage webhook endpoints: where each change to an order is sent (v3.2)');
  const webhookUrls = () => ({ rules: config().webhooks });
  const eventsOption = (value: string): WebhookEventType[] =>
    parsedOption(() =>
      commaList('--events', value, 'event type').map((type) => {
        const known = WEBHOOK_EVENT_TYPES.find((each) => each === type);
        if (known === undefined) throw new Error(`--events: "${type}" is not an event type (${WEBHOOK_EVENT_TYPES.join(', ')})`);
        return known;
      }),
    );
  webhooks
    .command('add')
    .description(
      'make a webhook endpoint: every change committed from now on is sent to URL; prints its id and its secret, shown only this once',
    )
    .argument('<url>', 'where deliveries are sent: https, at a public address (unless the deployment allows http or private addresses)')
    .option('--events <list>', `the event types to send, comma-separated (default: every type: ${WEBHOOK_EVENT_TYPES.join(',')})`)
    .option('--description <text>', 'what the endpoint is for')
    .action(async (url: string, options: { events?: string; description?: string }) => {
      const events = options.events === undefined ? undefined : eventsOption(options.events);
      if (options.description !== undefined && options.description.length > 500)
        throw new CliError('--description: at most 500 characters');
      const made = await withStore(config(), (store) =>
        createEndpoint(store, { url, events, description: options.description }, webhookUrls()),
      );
      if ('refused' in made) throw new CliError(`URL: ${made.refused.replace(/^url:? /, '')}`);
      if ('missing' in made) throw new CliError('the endpoint was not made');
      await io.stdout(`id: ${made.done.id}\nsecret: ${made.done.secret}\n`);
    });
  webhooks
    .command('list')
    .description('list webhook endpoints with their URLs, event types and status (never their secrets)')
    .action(async () => {
      const all = await withStore(config(), async (store) => {
        const found: EndpointView[] = [];
        for (let after = ''; ;) {
          const page = await endpointPage(store, after, 1000);
          found.push(...page.endpoints);
          if (page.nextCursor === null) return found;
          after = page.nextCursor;
        }
      });
      await io.stdout(
        [
          'ID\tURL\tEVENTS\tSTATUS\tCREATED\tDESCRIPTION',
          ...all.map(
            (e) =>
              `${e.id}\t${e.url}\t${e.events?.join(',') ?? 'all'}\t${e.status}${e.disabledReason === undefined ? '' : ` (${e.disabledReason})`}\t${e.createdAt}\t${e.description ?? '-'}`,
          ),
        ].join('\n') + '\n',
      );
    });
  webhooks
    .command('enable')
    .description('turn a disabled webhook endpoint back on, its failures forgotten: sending resumes where it stopped')
    .argument('<id>', 'the endpoint id (we_…)')
    .action(async (id: string) => {
      const changed = await withStore(config(), (store) => updateEndpoint(store, id, { status: 'enabled' }, webhookUrls()));
      if (!('done' in changed)) throw new CliError(`ID: no webhook endpoint has the id "${id}"`);
      await io.stdout(`enabled ${id}\n`);
    });
  webhooks
    .command('remove')
    .description('remove a webhook endpoint and its delivery log; nothing more is sent to it')
    .argument('<id>', 'the endpoint id (we_…)')
    .action(async (id: string) => {
      const removed = await withStore(config(), (store) => store.webhooks.removeEndpoint(id));
      if (!removed) throw new CliError(`ID: no webhook endpoint has the id "${id}"`);
      await io.stdout(`removed ${id}\n`);
    });
  webhooks
    .command('deliveries')
    .description("show a webhook endpoint's delivery log, newest first: each attempt's status or error, and what came of it")
    .argument('<id>', 'the endpoint id (we_…)')
    .option('--limit <n>', 'the most attempts to show', '50')
    .action(async (id: string, options: { limit: string }) => {
      const limit = Number(options.limit);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
        throw new CliError(`--limit: a whole number from 1 to 1000, got "${options.limit}"`);
      const page = await withStore(config(), (store) => deliveryPage(store, id, undefined, limit));
      if (page === null) throw new CliError(`ID: no webhook endpoint has the id "${id}"`);
      await io.stdout(
        [
          'AT\tEVENT\tATTEMPT\tANSWER\tOUTCOME\tMS',
          ...page.deliveries.map(
            (d) => `${d.at}\t${d.eventId}\t${d.attempt}\t${d.status ?? d.error ?? '-'}\t${d.outcome}\t${d.durationMs}`,
          ),
        ].join('\n') + '\n',
      );
    });
  webhooks
    .command('replay')
    .description('send a webhook endpoint again every event kept since a time, in the order they committed')
    .argument('<id>', 'the endpoint id (we_…)')
    .requiredOption('--since <date-time>', 'an RFC 3339 date-time: events that occurred then or later are sent again')
    .action(async (id: string, options: { since: string }) => {
      const at = isDateTime(options.since) ? Date.parse(options.since) : Number.NaN;
      if (Number.isNaN(at)) throw new CliError(`--since: an RFC 3339 date-time such as 2026-11-27T09:00:00Z, got "${options.since}"`);
      const events = await withStore(config(), (store) => store.webhooks.replaySince(id, new Date(at).toISOString()));
      if (events === null) throw new CliError(`ID: no webhook endpoint has the id "${id}"`);
      await io.stdout(`${events} event(s) will be sent again to ${id}\n`);
    });

  const orders = program.command('orders').description('manage orders');
  orders
    .command('import')
    .description('import a JSON array of orders, all or nothing, in bounded memory')
    .argument('<file>', 'the file to read, or - for stdin')
    .action(async (file: string) => {
      const { ImportError, compileImportValidator, importOrders } = await import('../orders');
      const input = file === '-' ? { stream: io.stdin(), totalBytes: undefined } : await openFile(file);
      const validate = compileImportValidator(loadDocument());
      const progress = await io.progress?.(input);
      let count: number;
      try {
        count = await withStore(config(), (store) => importOrders(store, validate, input.stream, progress?.update));
      } catch (err) {
        if (err instanceof ImportError) throw new CliError(`${err.message}; nothing was imported`);
        throw err;
      } finally {
        progress?.stop();
      }
      // The import is committed: a report that cannot be written does not make it fail.
      await ignoreLostOutput(io.stdout(`imported ${count} order${count === 1 ? '' : 's'}\n`));
    });
  orders
    .command('ship')
    .description('mark a pending order as shipped')
    .argument('<id>', 'id of the order')
    .action(async (raw: string) => {
      const id = parseId(raw);
      if (id === undefined) throw new CliError(idProblem('ID', raw));
      const outcome = await withStore(config(), (store) => store.shipOrder(id));
      switch (outcome) {
        case 'shipped':
          await ignoreLostOutput(io.stdout(`order ${id} shipped\n`));
          return;
        case 'already_shipped':
          await ignoreLostOutput(io.stdout(`order ${id} had already shipped; nothing changed\n`));
          return;
        case 'cancelled':
          throw new CliError(`ID: order ${id} is cancelled and cannot ship`);
        case 'not_found':
          throw new CliError(`ID: order ${id} was not found`);
      }
    });

  program
    .command('contract-check')
    .description('check that a deployment keeps a version of the contract; read-only unless --allow-writes')
    .requiredOption('--base-url <url>', 'the deployment, e.g. https://orders.example.com')
    .requiredOption('--api-key <key>', 'an API key for it')
    .option('--api-version <version>', `the version to check: ${documentVersions().join(', ')}`, 'v1')
    .option(
      '--allow-writes',
      'also cancel an order (--cancel-order) and try a shipped one (--shipped-order); from v3.1, place, replay and ship an order of its own',
    )
    .option('--cancel-order <id>', 'a pending order to cancel: expects 204, then 404 (needs --allow-writes)')
    .option('--shipped-order <id>', 'a shipped order: expects 409 (needs --allow-writes)')
    .option('--json', 'print the report as JSON')
    .action(
      async (options: {
        baseUrl: string;
        apiKey: string;
        apiVersion: string;
        allowWrites?: boolean;
        cancelOrder?: string;
        shippedOrder?: string;
        json?: boolean;
      }) => {
        const version = options.apiVersion;
        if (!isApiVersion(version)) throw new CliError(`--api-version must be one of ${documentVersions().join(', ')}, got "${version}"`);
        if (!/^https?:\/\/[^/]/.test(options.baseUrl))
          throw new CliError(`--base-url must be an http:// or https:// URL, got "${options.baseUrl}"`);
        const document = loadDocument(specPath(version));
        // A version that places orders makes its own order to write to.
        const places = [...documentOperations(document)].some((operation) => operation.operationId === 'placeOrder');
        const writes: { cancelOrder?: number; shippedOrder?: number; place?: boolean } = {};
        for (const [flag, raw, field] of [
          ['--cancel-order', options.cancelOrder, 'cancelOrder'],
          ['--shipped-order', options.shippedOrder, 'shippedOrder'],
        ] as const) {
          if (raw === undefined) continue;
          if (!options.allowWrites) throw new CliError(`${flag} changes the deployment; add --allow-writes to allow it`);
          const id = parseId(raw);
          if (id === undefined) throw new CliError(idProblem(flag, raw));
          writes[field] = id;
        }
        if (options.allowWrites && Object.keys(writes).length === 0 && !places) {
          throw new CliError('--allow-writes needs --cancel-order ID and/or --shipped-order ID to know which orders it may use');
        }
        if (options.allowWrites && places) writes.place = true;
        const { checkDeployment, formatReport } = await import('./contract-check');
        const results = await checkDeployment({
          baseUrl: options.baseUrl,
          apiKey: options.apiKey,
          version,
          document,
          writes,
        });
        const passed = results.every((result) => result.ok);
        await io.stdout(
          options.json
            ? `${JSON.stringify({ baseUrl: options.baseUrl, passed, checks: results }, null, 2)}\n`
            : formatReport(options.baseUrl, results),
        );
        if (!passed) throw new ContractViolation();
      },
    );

  program
    .command('compat')
    .description(
      'compare OpenAPI documents: with no options, every working document of this project against its last release; with --base and --head, any two',
    )
    .option('--base <file|url>', 'the document you built against: a file, or an http(s) URL')
    .option('--head <file|url>', 'the document to check, e.g. https://orders.example.com/v1/openapi.json')
    .option('--json', 'print the findings as JSON')
    .action(async (options: { base?: string; head?: string; json?: boolean }) => {
      const { checkProject, formatFindings } = await import('../contract/compat/project');
      const now = new Date();
      if (options.base === undefined && options.head === undefined) {
        const checks = checkProject(now);
        const passed = checks.every((check) => (check.report?.problems.length ?? 0) === 0);
        if (options.json) {
          await io.stdout(`${JSON.stringify({ passed, documents: checks }, null, 2)}\n`);
        } else {
          for (const { document, release, report } of checks) {
            if (report === null) {
              await io.stdout(`${document}: no release of its major version yet; nothing is frozen\n`);
              continue;
            }
            const summary = report.findings.length === 0 ? 'no changes' : `${report.findings.length} change(s)`;
            await io.stdout(`${document} (${report.headVersion}) against ${release} (${report.baseVersion}): ${summary}\n`);
            await io.stdout(formatFindings(report.findings));
            for (const problem of report.problems) await io.stdout(`problem: ${problem}\n`);
          }
        }
        if (!passed) throw new ContractViolation();
        return;
      }
      if (options.base === undefined || options.head === undefined)
        throw new CliError('--base and --head go together: give both, or neither to check this project');
      const [base, head] = await Promise.all([readDocumentFrom('--base', options.base), readDocumentFrom('--head', options.head)]);
      const { compareDocuments } = await import('../contract/compat/compare');
      const findings = compareDocuments(base, head, now);
      const breaking = findings.filter((finding) => finding.class === 'breaking').length;
      if (options.json) await io.stdout(`${JSON.stringify({ breaking: breaking > 0, findings }, null, 2)}\n`);
      else {
        await io.stdout(formatFindings(findings));
        const count = (which: string) => findings.filter((finding) => finding.class === which).length;
        await io.stdout(`${breaking} breaking, ${count('additive')} additive, ${count('docs')} docs-only change(s)\n`);
      }
      if (breaking > 0) throw new ContractViolation();
    });

  return program;
}

/** An OpenAPI document from a file or an http(s) URL, YAML or JSON; a clear error naming the option when it cannot be read. */
async function readDocumentFrom(option: string, source: string): Promise<OpenAPIV3.Document> {
  let text: string;
  try {
    if (/^https?:\/\//.test(source)) {
      const response = await fetch(source, { signal: AbortSignal.timeout(15000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } else text = fs.readFileSync(source, 'utf8');
  } catch (err) {
    throw new CliError(`${option}: cannot read ${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let document: unknown;
  try {
    document = parseDocumentText(text);
  } catch (err) {
    throw new CliError(`${option}: ${source} is not YAML or JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isOpenApiDocument(document)) throw new CliError(`${option}: ${source} is not an OpenAPI document (it needs info.version and paths)`);
  return document;
}

/** The deployment broke the contract: the report says how; exit status 1 with nothing more. */
class ContractViolation extends Error {}

/** Runs the CLI and resolves to its exit status; `serve` keeps the process alive after resolving. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ContractViolation) return 1;
    const message = err instanceof CliError || err instanceof ConfigError || err instanceof Error ? err.message : String(err);
    await ignoreLostOutput(io.stderr(`petstore-orders: ${message}\n`));
    return 1;
  }
}

/** Waits for a write whose loss changes nothing: the command's work is done and its status stands. */
async function ignoreLostOutput(written: void | Promise<void>): Promise<void> {
  await Promise.resolve(written).catch(() => undefined);
}

function codeOrMessage(err: unknown): string {
  return errorCode(err) ?? errorMessage(err);
}

async function withStore<T>(config: Config, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(config);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** An import's input, with its size when it is a file. */
export interface ImportInput {
  stream: Readable;
  totalBytes: number | undefined;
}

async function openFile(file: string): Promise<ImportInput> {
  try {
    const handle = await fs.promises.open(file, 'r');
    const stat = await handle.stat();
    if (stat.isDirectory()) {
      await handle.close();
      throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    }
    return { stream: handle.createReadStream(), totalBytes: stat.size };
  } catch (err) {
    throw new CliError(`FILE: cannot read ${file}: ${codeOrMessage(err)}`);
  }
}

/**
 * What `serve --demo` prints: where it serves, the demo key once (else how to make one, as a
 * command that works on this machine), a request to paste, and the reference page. It leads with
 * the newest version, whose examples the README follows.
 */
function demoBanner(url: string, dbPath: string, key: string | null, cliCommand: string): string {
  const newest = documentVersions().at(-1) ?? 'v1';
  const lines = [``, `petstore-orders is serving the demo store ${dbPath} at ${url}`];
  if (key === null) {
    lines.push(
      `Its demo key was printed when the store was created and cannot be shown again.`,
      `Make another with: ${cliCommand} keys create --name you --scopes ${scopesOf(loadServedDocuments()).join(',')}`,
    );
  } else {
    lines.push(
      `Demo API key, with every scope and a rate limit of ${formatPolicies(DEMO_POLICIES)} (shown only this once): ${key}`,
      ``,
      `Try it (${newest}, a page of two pending orders, with its RateLimit fields):`,
      `  curl -i -H 'Authorization: Bearer ${key}' '${url}/${newest}/store/orders?status=pending&limit=2'`,
    );
  }
  lines.push(`API reference: ${url}/docs   (${newest}'s document: ${url}/${newest}/openapi.json; the older versions beside it)`, ``);
  return lines.join('\n');
}
