import { ConfigError, DEFAULT_LIMITS, loadConfig } from '../src/config';

describe('loadConfig', () => {
  test('defaults when nothing is set', () => {
    const config = loadConfig({});

    expect(config.limits).toEqual(DEFAULT_LIMITS);
    expect(config.busyTimeoutMs).toBe(2000);
    expect(config.shutdownTimeoutMs).toBe(10_000);
    expect(config.port).toBe(8080);
    expect(Object.isFrozen(config) && Object.isFrozen(config.limits)).toBe(true);
  });

  test('reads every limit from its variable', () => {
    const config = loadConfig({
      PETSTORE_HEADERS_TIMEOUT_MS: '1000',
      PETSTORE_REQUEST_TIMEOUT_MS: '2000',
      PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '3000',
      PETSTORE_MAX_HEADER_BYTES: '4096',
      PETSTORE_MAX_BODY_BYTES: '0',
      PETSTORE_BUSY_TIMEOUT_MS: '50',
      PETSTORE_SHUTDOWN_TIMEOUT_MS: '0',
    });

    expect(config.limits).toEqual({ headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 3000, maxHeaderBytes: 4096, maxBodyBytes: 0 });
    expect(config.busyTimeoutMs).toBe(50);
    expect(config.shutdownTimeoutMs).toBe(0);
  });

  test.each([
    ['PETSTORE_HEADERS_TIMEOUT_MS', '0', 'PETSTORE_HEADERS_TIMEOUT_MS must be a whole number of at least 1, got "0"'],
    ['PETSTORE_REQUEST_TIMEOUT_MS', '1.5', 'PETSTORE_REQUEST_TIMEOUT_MS must be a whole number of at least 1, got "1.5"'],
    ['PETSTORE_MAX_HEADER_BYTES', '100', 'PETSTORE_MAX_HEADER_BYTES must be a whole number of at least 1024, got "100"'],
    ['PETSTORE_MAX_BODY_BYTES', '-1', 'PETSTORE_MAX_BODY_BYTES must be a whole number, got "-1"'],
    ['PETSTORE_BUSY_TIMEOUT_MS', 'soon', 'PETSTORE_BUSY_TIMEOUT_MS must be a whole number, got "soon"'],
    ['PETSTORE_SHUTDOWN_TIMEOUT_MS', '1e4', 'PETSTORE_SHUTDOWN_TIMEOUT_MS must be a whole number, got "1e4"'],
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new ConfigError(message));
  });
});
