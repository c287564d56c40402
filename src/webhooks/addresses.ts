import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { errorCode, errorMessage } from '../thrown';

/**
 * Where a webhook may be sent. A URL a key holder gives is fetched by the service from inside its
 * network, so without rules it could read what only the service can reach (server-side request
 * forgery): a cloud's metadata address, a database's admin page, localhost. So:
 *
 * - the URL is `https`, unless the operator allows `http` (PETSTORE_WEBHOOK_ALLOW_HTTP);
 * - every address its host names is a public unicast address, unless the operator allows private
 *   ones (PETSTORE_WEBHOOK_ALLOW_PRIVATE), when it is made and again before every attempt (a name's
 *   addresses can change); the attempt then connects to the address that was checked.
 *
 * "Public unicast" is ipaddr.js's range `unicast`: every range it names otherwise (loopback,
 * private, link-local and so the metadata address 169.254.169.254, unique-local, carrier-grade
 * NAT, multicast, reserved, documentation, and addresses that embed another: IPv4-mapped, NAT64,
 * 6to4, Teredo) is refused. An IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
 */
export interface AddressRules {
  /** Whether `http:` URLs are allowed (PETSTORE_WEBHOOK_ALLOW_HTTP). */
  readonly allowHttp: boolean;
  /** Whether private, loopback and link-local addresses are allowed (PETSTORE_WEBHOOK_ALLOW_PRIVATE). */
  readonly allowPrivate: boolean;
}

/** The rules as shipped: `https` only, public addresses only. */
export const STRICT_RULES: AddressRules = Object.freeze({ allowHttp: false, allowPrivate: false });

/** Longest URL an endpoint may have. */
export const MAX_URL_LENGTH = 2048;

/** Why a URL cannot be an endpoint's, by its text alone; undefined when it can. The message names the rule. */
export function urlProblem(text: string, rules: AddressRules): string | undefined {
  if (text.length > MAX_URL_LENGTH) return `url is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp)) {
    return rules.allowHttp ? 'url must be https or http' : 'url must be https (the operator has not allowed http)';
  }
  if (url.username !== '' || url.password !== '') return 'url must not carry a user name or password';
  if (url.hash !== '') return 'url must not have a fragment';
  const literal = hostAddress(url.hostname);
  if (literal !== undefined) {
    const problem = addressProblem(literal, rules);
    return problem === undefined ? undefined : `url: ${problem}`;
  }
  if (!rules.allowPrivate && isLocalName(url.hostname))
    return `url's host ${url.hostname} is a local name (private addresses are not allowed)`;
  return undefined;
}

/** The address a URL's host is written as (`[::1]` without its brackets), or undefined when it is a name. */
export function hostAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare)) ? bare : undefined;
}

/** Names that are local by definition, whatever a resolver says of them. */
function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.local') || name.endsWith('.internal');
}

/** Why a webhook may not be sent to an address; undefined when it may. The message names the rule. */
export function addressProblem(address: string, rules: AddressRules): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address();
  const range = parsed.range();
  if (range === 'unicast' || rules.allowPrivate) return undefined;
  return `${address} is a ${RANGE_NAMES[range] ?? `${range} address`}, not a public one (private addresses are not allowed)`;
}

/** How the messages name ipaddr.js's ranges. */
const RANGE_NAMES: Readonly<Record<string, string>> = {
  loopback: 'loopback address',
  private: 'private address',
  linkLocal: 'link-local address (the cloud metadata address is one)',
  uniqueLocal: 'unique-local (private) address',
  carrierGradeNat: 'carrier-grade NAT address',
  unspecified: 'unspecified address',
  multicast: 'multicast address',
  broadcast: 'broadcast address',
  reserved: 'reserved address',
};

/** One address a name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a name to every address it has, as the system resolver does. */
export type Resolve = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver (getaddrinfo, as connections use), every address. */
export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** The addresses an attempt may connect to: at least one. */
export type CheckedAddresses = readonly [ResolvedAddress, ...ResolvedAddress[]];

/** Where an attempt may connect: the addresses checked, or why it may not be made. */
export type Destination = { readonly addresses: CheckedAddresses } | { readonly refused: string };

/**
 * The addresses an attempt to `url` may connect to, checked now: every address its host names must
 * be allowed (one that is not refuses them all, so that no order of answers can slip one through).
 */
export async function destinationOf(url: URL, rules: AddressRules, resolve: Resolve = systemResolve): Promise<Destination> {
  const problem = urlProblem(url.href, rules);
  if (problem !== undefined) return { refused: problem };
  const literal = hostAddress(url.hostname);
  if (literal !== undefined) return { addresses: [{ address: literal, family: literal.includes(':') ? 6 : 4 }] };
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await resolve(url.hostname);
  } catch (err) {
    return { refused: `${url.hostname} did not resolve (${errorCode(err) ?? errorMessage(err)})` };
  }
  const [first, ...rest] = addresses;
  if (first === undefined) return { refused: `${url.hostname} resolved to no address` };
  for (const { address } of addresses) {
    const refused = addressProblem(address, rules);
    if (refused !== undefined) return { refused: `${url.hostname} resolves to ${refused}` };
  }
  return { addresses: [first, ...rest] };
}
