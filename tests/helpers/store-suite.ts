import type { Store } from '../../src/store';
import { addKey } from './store';
import { storeKinds, type StoreKind, type StoredRow, type TestStore } from './stores';

/** What every test of a store suite gets: a fresh, empty store with one key. */
export interface StoreSuite {
  readonly kind: StoreKind;
  readonly store: Store;
  /** The store as the test helpers see it: its rows read around the service, its CLI arguments. */
  readonly fresh: TestStore;
  readonly rows: () => Promise<StoredRow[]>;
  /** A valid key (named "suite"), and the Authorization header that carries it. */
  readonly key: string;
  readonly auth: { Authorization: string };
}

/**
 * Runs `suite` once per store kind (SQLite, and PostgreSQL when it answers), each test with a
 * fresh, empty store holding one key, closed after the test. The one place this set-up lives.
 */
export function eachStore(suite: (s: StoreSuite) => void): void {
  describe.each(storeKinds())('$name store', (kind) => {
    let current: TestStore | undefined;
    let key = '';
    beforeAll(() => kind.setUp());
    afterAll(() => kind.tearDown());
    beforeEach(async () => {
      current = await kind.open();
      key = await addKey(current.store, 'suite');
    });
    afterEach(() => current?.store.close());

    const fresh = (): TestStore => {
      if (current === undefined) throw new Error('the store suite is used outside a test');
      return current;
    };
    suite({
      kind,
      get store() {
        return fresh().store;
      },
      get fresh() {
        return fresh();
      },
      rows: () => fresh().rows(),
      get key() {
        return key;
      },
      get auth() {
        return { Authorization: `Bearer ${key}` };
      },
    });
  });
}
