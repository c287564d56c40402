import type { OpenAPIV3 } from 'openapi-types';
import { createOpenApi } from '../openapi';
import { isRecord } from '../records';
import { undeclaredQueryPolicy } from './document';
import { describeAjvError } from './validation';

/** Checks one webhook body against the request its event type's webhook declares: why it breaks it, or undefined. */
export type WebhookBodyCheck = (body: { readonly type: string }) => string | undefined;

/**
 * The check of every webhook body a document declares (OpenAPI 3.1's `webhooks`, one per event
 * type, named by it): delivery runs it before it sends a body, as the server checks every reply.
 * A body of a type the document declares no webhook for breaks it too.
 */
export async function webhookBodyCheck(document: OpenAPIV3.Document, version: string): Promise<WebhookBodyCheck> {
  const api = await createOpenApi(document, { apiRoot: `/${version}`, undeclaredQuery: undeclaredQueryPolicy(document) });
  const webhooks = isRecord(document) ? document.webhooks : undefined;
  const validators = new Map<string, ReturnType<typeof api.compile>>();
  if (isRecord(webhooks)) {
    for (const [type, item] of Object.entries(webhooks)) {
      const post = isRecord(item) ? item.post : undefined;
      const requestBody = isRecord(post) ? post.requestBody : undefined;
      const content = isRecord(requestBody) ? requestBody.content : undefined;
      const json = isRecord(content) ? content['application/json'] : undefined;
      const schema = isRecord(json) ? json.schema : undefined;
      // Compiled with the document's schemas beside it, so that its `$ref`s resolve as in the document.
      if (isRecord(schema)) validators.set(type, api.compile({ ...schema, components: { schemas: document.components?.schemas ?? {} } }));
    }
  }
  return (body) => {
    const validate = validators.get(body.type);
    if (validate === undefined) return `the document declares no webhook for ${body.type}`;
    if (validate(body)) return undefined;
    return (validate.errors ?? []).map((error) => describeAjvError(error, 'body')).join('; ');
  };
}
