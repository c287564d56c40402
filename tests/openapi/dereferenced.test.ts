import OpenAPIBackend from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { loadDocument, specPath } from '../../src/contract/document';
import { asValidatedDocument } from '../../src/openapi';
import { builtDefinition, definitionFromJson, definitionJson, definitionKey, useBuiltDefinition } from '../../src/openapi/dereferenced';
import { useDocumentCheck } from '../../src/openapi/document-check';

// A start hands openapi-backend each shipped document's definition as the build dereferenced it
// (src/openapi/dereferenced.ts), in the library's quick mode. These tests fail if the pinned
// library would make anything else of the document at start: another definition, other
// operations, or no check of the document.

const VERSIONS = ['v1', 'v2', 'v3'] as const;

/** The document as the adapter gives it to openapi-backend. */
function given(document: OpenAPIV3.Document): OpenAPIV3.Document {
  return asValidatedDocument(structuredClone(document));
}

/**
 * Where a definition uses one object twice: for each object or array met again, depth first in
 * JSON's order, its place and the place it was met first. openapi-backend builds its validators'
 * schemas from the objects as they are, so a built definition must share what the library's does.
 */
function sharing(definition: unknown): string[] {
  const first = new Map<object, string>();
  const found: string[] = [];
  const walk = (value: unknown, place: string): void => {
    if (typeof value !== 'object' || value === null) return;
    const met = first.get(value);
    if (met !== undefined) {
      found.push(`${place} is ${met}`);
      return;
    }
    first.set(value, place);
    for (const [name, each] of Object.entries(value)) walk(each, `${place}/${name}`);
  };
  walk(definition, '#');
  return found;
}

/** openapi-backend as it starts on its own: the document parsed, checked and dereferenced by json-schema-ref-parser. */
async function libraryStart(document: OpenAPIV3.Document): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({ definition: given(document), strict: true, validate: false });
  useDocumentCheck(api, document);
  return api.init();
}

describe.each(VERSIONS)('the %s document', (version) => {
  const document = loadDocument(specPath(version));

  test('has a definition made by the build, which is what openapi-backend dereferences at init, shared objects included', async () => {
    const built = builtDefinition(definitionKey(given(document)));

    const library = (await libraryStart(document)).definition;

    expect(built).toBeDefined();
    expect(built).toEqual(library);
    expect(sharing(built)).toEqual(sharing(library));
    expect(sharing(library).length).toBeGreaterThan(0);
  });

  test('is taken as built: the same definition and operations as the library makes, and the document checked', async () => {
    const built = builtDefinition(definitionKey(given(document)));
    if (built === undefined) throw new Error(`the build made no definition of the ${version} document`);
    const api = new OpenAPIBackend({ definition: built, strict: true, validate: false, quick: true });
    useDocumentCheck(api, document);
    useBuiltDefinition(api, built);
    await api.init();
    const library = await libraryStart(document);

    expect(api.document).toBe(built);
    expect(api.definition).toEqual(library.definition);
    expect(sharing(api.definition)).toEqual(sharing(library.definition));
    expect(api.getOperations()).toEqual(library.getOperations());
  });
});

test('each build of a document gets a definition of its own', () => {
  const key = definitionKey(given(loadDocument(specPath('v3'))));

  expect(builtDefinition(key)).not.toBe(builtDefinition(key));
});

test('a document the build did not see has no built definition: the library dereferences it at start', () => {
  const edited = structuredClone(loadDocument(specPath('v2')));
  edited.info.description = `${edited.info.description ?? ''} Edited since the build.`;

  expect(builtDefinition(definitionKey(given(edited)))).toBeUndefined();
});

test('a built definition does not spare its document the check', () => {
  const document = loadDocument(specPath('v1'));
  const built = builtDefinition(definitionKey(given(document)));
  if (built === undefined) throw new Error('the build made no definition of the v1 document');
  const broken = { ...structuredClone(document), paths: 'none' };
  const api = new OpenAPIBackend({ definition: built, strict: true, validate: false, quick: true });
  useDocumentCheck(api, broken);

  expect(() => useBuiltDefinition(api, built)).toThrow(/^Document is not valid OpenAPI\. \d+ validation errors/);
});

describe('a definition written for the build', () => {
  const node = { type: 'object', properties: { name: { type: 'string' } } } as Record<string, unknown>;
  const definition = {
    openapi: '3.1.0',
    info: { title: 'trees', version: '1.0.0' },
    paths: {},
    components: { schemas: { Node: node, Leaf: node.properties } },
  };
  // A tree's node holds its children: a cycle, as json-schema-ref-parser dereferences a schema that refers to itself.
  (node.properties as Record<string, unknown>).children = { type: 'array', items: node };

  test('is read back with each shared object, and each cycle, as it was', () => {
    const json = definitionJson(definition);
    if (json === undefined) throw new Error('the definition was not written');
    const read = definitionFromJson(json);

    expect(sharing(read)).toEqual(sharing(definition));
    expect(sharing(read)).toEqual([
      '#/components/schemas/Node/properties/children/items is #/components/schemas/Node',
      '#/components/schemas/Leaf is #/components/schemas/Node/properties',
    ]);
    expect(JSON.stringify(definitionFromJson(json)?.info)).toBe(JSON.stringify(definition.info));
  });

  test.each([
    ['-0', { minimum: -0 }],
    ['an undefined property', { minimum: undefined }],
    ['a date', { example: new Date(0) }],
    ['the key links are written with', { ['\u0000link']: ['paths'] }],
  ])('is not written when it holds %s, which JSON would not carry as it is', (_case, schema) => {
    expect(definitionJson({ ...definition, components: { schemas: { Odd: schema } } })).toBeUndefined();
  });
});
