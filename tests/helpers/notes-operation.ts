import fs from 'node:fs';

/**
 * What a spec author adds to the v2 document in the README's walkthrough: `POST
 * /store/orders/{orderId}/notes` (addOrderNote), with a path parameter, a required query parameter
 * and a JSON body, answering with `responses` (YAML, indented as under `responses:`).
 */
export function addOrderNote(responses: string): string {
  return `  /store/orders/{orderId}/notes:
    post:
      operationId: addOrderNote
      x-scopes: [orders:read]
      tags: [orders]
      summary: Add a note to an order
      parameters:
        - name: orderId
          in: path
          required: true
          schema:
            $ref: '#/components/schemas/Id'
        - name: priority
          in: query
          required: true
          schema:
            type: integer
            minimum: 1
            maximum: 5
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/Note'
      responses:
${responses}`;
}

/** The Note schema addOrderNote takes and answers. */
const NOTE_SCHEMA = `    Note:
      type: object
      additionalProperties: false
      required: [text]
      properties:
        text:
          type: string
          maxLength: 200
`;

/** Adds an operation's path and the Note schema to the document in `spec`. */
export function addToDocument(spec: string, operation: string): void {
  const text = fs.readFileSync(spec, 'utf8');
  fs.writeFileSync(spec, text.replace(/^paths:\n/m, `paths:\n${operation}`).replace(/^ {2}schemas:\n/m, `  schemas:\n${NOTE_SCHEMA}`));
}
