// On a Node.js the project does not support, stop with the bin's message before any test loads the SQLite driver.
import '../src/cli/supported-node';
import { PG_REQUIRED, SKIP_LINE, postgresAvailable } from './helpers/postgres';

// Decides once, before any worker starts, whether the suites also run on PostgreSQL.
export default async function globalSetup(): Promise<void> {
  const available = await postgresAvailable();
  if (!available && PG_REQUIRED) {
    throw new Error('PETSTORE_TEST_PG=required, but PostgreSQL does not answer; start it or set PETSTORE_TEST_PG_URL');
  }
  process.env.PETSTORE_TEST_PG_AVAILABLE = available ? '1' : '0';
  if (!available) process.stdout.write(`\n${SKIP_LINE}\n`);
}
