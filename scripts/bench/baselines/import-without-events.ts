// The import as `orders import` runs it (the same reader, validation, staging and publish), but
// without writing the change feed's order.created events: the bench's measure of what the events
// cost an import. Usage: import-without-events (--db FILE | --url URL) ORDERS.json
import fs from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadDocument } from '../../../src/contract/document';
import { compileImportValidator, validatedRecords } from '../../../src/orders/import';
import { openPostgresStore, openSqliteStore } from '../../../src/store';
import { timestamp } from '../../../src/store/core';
import { importIntoPostgres } from '../../../src/store/postgres/import';
import { PG_TYPES } from '../../../src/store/postgres/store';
import { importThroughStaging } from '../../../src/store/sqlite/import';
import { configureConnection } from '../../../src/store/sqlite/store';

async function main(): Promise<void> {
  const [flag, target, input] = process.argv.slice(2);
  if ((flag !== '--db' && flag !== '--url') || target === undefined || input === undefined) {
    throw new Error('usage: import-without-events (--db FILE | --url URL) ORDERS.json');
  }
  const records = validatedRecords(fs.createReadStream(input), compileImportValidator(loadDocument()), undefined);
  if (flag === '--db') {
    // The store makes the schema; the import then runs on a connection of its own, as the store's does.
    await openSqliteStore(target).close();
    const db = new Database(target, { timeout: 5000 });
    configureConnection(db);
    try {
      await importThroughStaging(db, records, timestamp(), { events: false });
    } finally {
      db.close();
    }
    return;
  }
  await (await openPostgresStore(target)).close();
  const pool = new pg.Pool({ connectionString: target, max: 1, types: PG_TYPES });
  const client = await pool.connect();
  try {
    await importIntoPostgres(client, records, timestamp(), { events: false });
  } finally {
    client.release();
    await pool.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
