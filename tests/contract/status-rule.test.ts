import OpenAPIUtils from 'openapi-backend/utils';
import { declares } from '../../src/contract/framework-statuses';
import { statusMatch } from '../../src/openapi';

// Which declared response answers a status is one rule, written in two places: the reply checks
// find the response with statusMatch, as the pinned openapi-backend does, and the framework's
// statuses (src/contract/framework-statuses.ts, which imports nothing, as scripts load it from
// source) ask whether one is declared. This holds the two, and the library, to the same answers.
describe('the status rule: a status, else its class, else default', () => {
  const responseSets: ReadonlyArray<Readonly<Record<string, string>>> = [
    {},
    { '200': 'exact' },
    { '2XX': 'class' },
    { default: 'default' },
    { '200': 'exact', '2XX': 'class', default: 'default' },
    { '404': 'exact', '4XX': 'class' },
    { '401': 'exact', '5XX': 'class' },
    { '1XX': 'class', '3XX': 'class', default: 'default' },
  ];
  const statuses = Array.from({ length: 500 }, (_, i) => 100 + i);

  test.each(responseSets.map((responses) => [JSON.stringify(responses), responses] as const))(
    'responses %s: the response found is the library’s, and declared exactly when one is found',
    (_name, responses) => {
      for (const status of statuses) {
        const library: unknown = OpenAPIUtils.findStatusCodeMatch(status, responses);
        expect([status, statusMatch(status, responses)]).toEqual([status, library]);
        expect([status, declares({ responses }, status)]).toEqual([status, library !== undefined]);
      }
    },
  );

  test('the sets cover an exact match, a class, a default and none', () => {
    const found = new Set<unknown>();
    for (const responses of responseSets) for (const status of statuses) found.add(statusMatch(status, responses) ?? 'none');
    expect([...found].sort()).toEqual(['class', 'default', 'exact', 'none']);
  });
});
