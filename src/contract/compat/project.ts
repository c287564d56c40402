import fs from 'node:fs';
import path from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { parse } from 'yaml';
import { isOpenApiDocument, readDocumentList, SPEC_PATH } from '../document';
import { changelogSections, checkRelease, semver, type CompatReport, type Finding } from './compare';

/** A working document's check against the last release of its major version. */
export interface DocumentCheck {
  document: string;
  /** The release it was compared with, or none: a major version not released yet has nothing to keep. */
  release: string | null;
  report: CompatReport | null;
}

/**
 * Checks every working document of the project against the last release of its major version in
 * `spec/released/<version>.yaml`, with CHANGELOG.md for the sections additive changes need.
 */
export function checkProject(now: Date, specDir = path.dirname(SPEC_PATH)): DocumentCheck[] {
  const releasedDir = path.join(specDir, 'released');
  const changelog = fs.readFileSync(path.join(specDir, '..', 'CHANGELOG.md'), 'utf8');
  const releases = fs.existsSync(releasedDir)
    ? fs
        .readdirSync(releasedDir)
        .filter((name) => /^\d+\.\d+\.\d+\.yaml$/.test(name))
        .map((name) => name.slice(0, -'.yaml'.length))
    : [];
  const documents = readDocumentList(path.join(specDir, 'documents.json'));
  return documents.map(({ document }) => {
    const head = readDocument(path.join(specDir, '..', document));
    const [major] = semver(head.info.version);
    const last = releases
      .filter((version) => semver(version)[0] === major)
      .sort((a, b) => compareVersions(semver(a), semver(b)))
      .pop();
    if (last === undefined) return { document, release: null, report: null };
    const base = readDocument(path.join(releasedDir, `${last}.yaml`));
    const report = checkRelease(base, head, { now, changelog });
    // The changelog announces every release: one section for each document kept in spec/released.
    const announced = changelogSections(changelog);
    for (const version of releases.filter((release) => semver(release)[0] === major && !announced.has(release))) {
      report.problems.push(`CHANGELOG.md has no section for the released ${version} (spec/released/${version}.yaml)`);
    }
    return { document, release: path.join('spec', 'released', `${last}.yaml`), report };
  });
}

/** Reads an OpenAPI document from a YAML or JSON file. */
export function readDocument(file: string): OpenAPIV3.Document {
  const document: unknown = parse(fs.readFileSync(file, 'utf8'));
  if (!isOpenApiDocument(document)) throw new Error(`${file} is not an OpenAPI document (it needs info.version and paths)`);
  return document;
}

/** One line per finding: its class, its rule, where, and what changed. */
export function formatFindings(findings: readonly Finding[]): string {
  return findings.map((finding) => `${finding.class.padEnd(8)}  ${finding.rule}  ${finding.pointer}  ${finding.message}\n`).join('');
}

function compareVersions(a: readonly [number, number, number], b: readonly [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}
