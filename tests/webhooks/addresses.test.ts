import { addressProblem, destinationOf, hostAddress, STRICT_RULES, urlProblem, type Resolve } from '../../src/webhooks/addresses';

// Where a webhook may be sent, as functions: no socket is opened and no name is looked up here
// (every resolver below answers from a table), so the rules for addresses outside loopback are
// tested without sending anything anywhere.
const LOCAL = { allowHttp: true, allowPrivate: true };

test('only public unicast addresses are allowed, and the refusal names the rule', () => {
  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local address (the cloud metadata address is one)'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'], // IPv4-mapped: judged as the IPv4 address
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'not a public one'], // NAT64 of 10.0.0.1
    ['2002:a00:1::', 'not a public one'], // 6to4 of 10.0.0.1
    ['2001:db8::1', 'not a public one'], // documentation
  ];
  for (const [address, rule] of refused) {
    const problem = addressProblem(address, STRICT_RULES);
    expect({ address, problem }).toEqual({ address, problem: expect.stringContaining(rule) });
    expect(problem).toContain('private addresses are not allowed');
    expect(addressProblem(address, LOCAL)).toBeUndefined();
  }
  for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:93.184.215.14']) {
    expect({ address, problem: addressProblem(address, STRICT_RULES) }).toEqual({ address, problem: undefined });
  }
  expect(addressProblem('not-an-address', LOCAL)).toBe('not-an-address is not an IP address');
});

test('a URL must be https unless http is allowed, absolute, without credentials or fragment, and not at a refused address', () => {
  expect(urlProblem('https://hooks.example.com/petstore', STRICT_RULES)).toBeUndefined();
  expect(urlProblem('http://hooks.example.com/petstore', STRICT_RULES)).toBe('url must be https (the operator has not allowed http)');
  expect(urlProblem('http://hooks.example.com/petstore', { allowHttp: true, allowPrivate: false })).toBeUndefined();
  expect(urlProblem('ftp://hooks.example.com/', LOCAL)).toBe('url must be https or http');
  expect(urlProblem('/relative', LOCAL)).toBe('url is not an absolute URL');
  expect(urlProblem('https://user:pw@hooks.example.com/', LOCAL)).toBe('url must not carry a user name or password');
  expect(urlProblem('https://hooks.example.com/#x', LOCAL)).toBe('url must not have a fragment');
  expect(urlProblem(`https://hooks.example.com/${'a'.repeat(2048)}`, LOCAL)).toBe('url is longer than 2048 characters');
  expect(urlProblem('https://127.0.0.1:8443/hook', STRICT_RULES)).toContain('loopback');
  expect(urlProblem('https://[::1]/hook', STRICT_RULES)).toContain('loopback');
  expect(urlProblem('https://[::ffff:169.254.169.254]/', STRICT_RULES)).toContain('link-local');
  expect(urlProblem('https://localhost:8443/hook', STRICT_RULES)).toContain('local name');
  expect(urlProblem('https://metadata.google.internal/', STRICT_RULES)).toContain('local name');
  expect(urlProblem('https://127.0.0.1:8443/hook', LOCAL)).toBeUndefined();
  // A host written in another form of IPv4 (decimal, octal) is normalised by URL before it is judged.
  expect(urlProblem('https://2130706433/', STRICT_RULES)).toContain('loopback');
  expect(urlProblem('https://0x7f.1/', STRICT_RULES)).toContain('loopback');
  expect(hostAddress('[2606:4700::1111]')).toBe('2606:4700::1111');
  expect(hostAddress('hooks.example.com')).toBeUndefined();
});

test('before an attempt, a name is resolved and every address it has must be allowed; the checked addresses are what it connects to', async () => {
  const table: Record<string, Array<{ address: string; family: 4 | 6 }>> = {
    'public.example': [{ address: '93.184.215.14', family: 4 }],
    'rebound.example': [{ address: '10.0.0.7', family: 4 }],
    'mixed.example': [
      { address: '93.184.215.14', family: 4 },
      { address: '::ffff:127.0.0.1', family: 6 },
    ],
  };
  const resolve: Resolve = async (name) => {
    const found = table[name];
    if (found === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found;
  };
  const destination = (url: string, rules = STRICT_RULES) => destinationOf(new URL(url), rules, resolve);

  expect(await destination('https://public.example/hook')).toEqual({ addresses: [{ address: '93.184.215.14', family: 4 }] });
  expect(await destination('https://rebound.example/hook')).toEqual({
    refused: 'rebound.example resolves to 10.0.0.7 is a private address, not a public one (private addresses are not allowed)',
  });
  expect(await destination('https://mixed.example/hook')).toEqual({ refused: expect.stringContaining('loopback') });
  expect(await destination('https://missing.example/hook')).toEqual({ refused: 'missing.example did not resolve (ENOTFOUND)' });
  expect(await destination('https://rebound.example/hook', LOCAL)).toEqual({ addresses: [{ address: '10.0.0.7', family: 4 }] });
  expect(await destination('http://public.example/hook')).toEqual({ refused: 'url must be https (the operator has not allowed http)' });
  expect(await destination('https://[::1]:9/hook', LOCAL)).toEqual({ addresses: [{ address: '::1', family: 6 }] });
});
