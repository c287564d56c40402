import { apiCompare } from 'api-smart-diff';
import type { OpenAPIV3 } from 'openapi-types';
import { asOpenApi31, openApiLineOf } from '../../openapi';
import { isRecord } from '../../records';
import { classify, type ChangeClass, type RawChange } from './rules';

/** One difference between a released document and its successor: where, under which rule, and how much it matters. */
export interface Finding {
  class: ChangeClass;
  rule: string;
  /** A JSON pointer into the documents (RFC 6901). */
  pointer: string;
  message: string;
}

/** The result of checking a successor against its release: the findings, and what they require of it. */
export interface CompatReport {
  baseVersion: string;
  headVersion: string;
  findings: Finding[];
  /** Why the successor may not ship as it is: breaking changes, a missing version bump or changelog section. */
  problems: string[];
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * Every difference between `base` and `head` that consumers could notice, each classified by the
 * rule table (rules.ts). api-smart-diff computes the differences over the dereferenced documents;
 * `components` are compared where operations use them, so a component nobody uses changes nothing.
 * An operation removed after the `x-sunset` its release announced is additive (`now` decides).
 */
export function compareDocuments(base: OpenAPIV3.Document, head: OpenAPIV3.Document, now: Date): Finding[] {
  // Copies through JSON: the library caches its comparisons by object, so an object the document
  // uses in two places (a YAML anchor, or a schema shared in code) must be two objects.
  // A release in 3.0 and its successor in 3.1 are compared as two 3.1 documents: the same contract
  // spelled in either is the same.
  const [before, after] = openApiLineOf(base) === openApiLineOf(head) ? [base, head] : [asOpenApi31(base), asOpenApi31(head)];
  const { diffs } = apiCompare(JSON.parse(JSON.stringify(before)), JSON.parse(JSON.stringify(after)));
  const findings: Finding[] = [];
  const openSets = new Map<string, OpenSetChange>();
  for (const diff of diffs) {
    const path = diff.path;
    if (path[0] === 'components' || path[0] === 'openapi') continue;
    const at = path.indexOf(OPEN_SET);
    if (at !== -1) {
      openSetChange(openSets, path.slice(0, at + 1), diff);
      continue;
    }
    const change: RawChange = {
      action: diff.action,
      path,
      before: diff.before,
      after: diff.after,
      libraryType: diff.type,
    };
    let verdict = classify(change);
    if (verdict === undefined) continue;
    if (verdict.class === 'breaking' && (verdict.rule === 'operation-removed' || verdict.rule === 'path-removed')) {
      if (sunsetPassed(base, path, now)) verdict = { rule: 'operation-removed-after-sunset', class: 'additive' };
    }
    findings.push({ ...verdict, pointer: pointerOf(path), message: diff.description ?? `${diff.action} ${path.join('.')}` });
  }
  for (const { path, added, removed } of openSets.values()) {
    const pointer = pointerOf(path);
    for (const value of added) if (!removed.has(value)) findings.push(openSetFinding('added', pointer, value));
    for (const value of removed) if (!added.has(value)) findings.push(openSetFinding('removed', pointer, value));
  }
  return findings;
}

/**
 * The keyword of an open set (Zalando's `x-extensible-enum`): the values a schema knows today, of a
 * string that may take others tomorrow, such as v3's `Error.code`. Clients must already handle a
 * value they do not know, so adding one is additive; removing one breaks a client that relies on it.
 */
const OPEN_SET = 'x-extensible-enum';

/** What changed in one open set: values in, values out. The diff library compares the list by position, the rule by value. */
interface OpenSetChange {
  readonly path: ReadonlyArray<string | number>;
  readonly added: Set<unknown>;
  readonly removed: Set<unknown>;
}

function openSetChange(
  sets: Map<string, OpenSetChange>,
  path: ReadonlyArray<string | number>,
  diff: { action: string; before?: unknown; after?: unknown },
): void {
  const key = JSON.stringify(path);
  let change = sets.get(key);
  if (change === undefined) sets.set(key, (change = { path, added: new Set(), removed: new Set() }));
  const values = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);
  if (diff.action !== 'add') for (const value of values(diff.before)) change.removed.add(value);
  if (diff.action !== 'remove') for (const value of values(diff.after)) change.added.add(value);
}

function openSetFinding(change: 'added' | 'removed', pointer: string, value: unknown): Finding {
  return change === 'added'
    ? { class: 'additive', rule: 'open-enum-value-added', pointer, message: `${JSON.stringify(value)} added to an open set` }
    : { class: 'breaking', rule: 'open-enum-value-removed', pointer, message: `${JSON.stringify(value)} removed from an open set` };
}

/**
 * Checks `head` against `base`, the last release of its major version: no breaking change; an
 * additive change only with a minor bump and a CHANGELOG.md section for the new version; a
 * docs-only change only with a (patch) bump.
 */
export function checkRelease(base: OpenAPIV3.Document, head: OpenAPIV3.Document, options: { now: Date; changelog: string }): CompatReport {
  const findings = compareDocuments(base, head, options.now);
  const baseVersion = base.info.version;
  const headVersion = head.info.version;
  const problems: string[] = [];
  const breaking = findings.filter((finding) => finding.class === 'breaking');
  if (breaking.length > 0) {
    problems.push(
      `${breaking.length} breaking change${breaking.length === 1 ? '' : 's'} to ${baseVersion}: a released contract is frozen; a breaking change needs a new major version, as a new document`,
    );
  }
  const needs: ChangeClass | undefined = findings.some((finding) => finding.class === 'additive')
    ? 'additive'
    : findings.length > 0
      ? 'docs'
      : undefined;
  const [baseMajor, baseMinor, basePatch] = semver(baseVersion);
  const [headMajor, headMinor, headPatch] = semver(headVersion);
  if (headMajor !== baseMajor) problems.push(`info.version ${headVersion} is not in the major version of ${baseVersion}`);
  else if (needs === 'additive' && !(headMinor > baseMinor)) {
    problems.push(
      `additive changes need a minor version bump: info.version is ${headVersion}, and must be at least ${baseMajor}.${baseMinor + 1}.0`,
    );
  } else if (needs === 'docs' && !(headMinor > baseMinor || (headMinor === baseMinor && headPatch > basePatch))) {
    problems.push(
      `description changes need a patch version bump: info.version is ${headVersion}, and must be at least ${baseMajor}.${baseMinor}.${basePatch + 1}`,
    );
  }
  if (needs === 'additive' && headVersion !== baseVersion && !changelogSections(options.changelog).has(headVersion)) {
    problems.push(`CHANGELOG.md has no section for ${headVersion} ("## ${headVersion} (date)"): additive changes are announced there`);
  }
  return { baseVersion, headVersion, findings, problems };
}

/** The versions CHANGELOG.md has a section for: its `## 1.2.0 (…)` headings. */
export function changelogSections(changelog: string): Set<string> {
  return new Set([...changelog.matchAll(/^## \[?v?(\d+\.\d+\.\d+)\]?/gm)].map(([, version = '']) => version));
}

/** A version's major, minor and patch numbers; a version that is not one is an error naming it. */
export function semver(version: string): [number, number, number] {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (match === null) throw new Error(`info.version "${version}" is not a version of the form MAJOR.MINOR.PATCH`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Whether what `path` removed was, in `base`, deprecated operations whose x-sunset has passed. */
function sunsetPassed(base: OpenAPIV3.Document, path: ReadonlyArray<string | number>, now: Date): boolean {
  const item: unknown = base.paths[String(path[1])];
  if (!isRecord(item)) return false;
  const methods = path.length >= 3 ? [String(path[2])] : Object.keys(item).filter((key) => METHODS.has(key));
  return methods.every((method) => {
    const operation = item[method];
    if (!isRecord(operation)) return false;
    const sunset = operation['x-sunset'];
    if (operation.deprecated !== true || (typeof sunset !== 'string' && !(sunset instanceof Date))) return false;
    const at = new Date(sunset);
    return !Number.isNaN(at.getTime()) && at.getTime() <= now.getTime();
  });
}

/** An RFC 6901 JSON pointer for a path of keys. */
function pointerOf(path: ReadonlyArray<string | number>): string {
  return path.map((key) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
