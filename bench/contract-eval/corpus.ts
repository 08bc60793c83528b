/**
 * The verdict-accuracy corpus of eval:contract: spec pairs written for this project (a small library API,
 * mutated one way per case), each labelled from oasdiff's documented semantics — a case is "breaking" when
 * oasdiff reports an ERR or WARN for it, else "not breaking" — with the oasdiff rule that decides the label.
 * None of it is taken from oasdiff's test data; it exercises the same rule families.
 */
type Json = Record<string, any>;
export type Version = '3.0' | '3.1';
export interface EvalCase {
  id: string;
  family: string;
  /** oasdiff's rule id and level that decide the label. */
  oasdiff: string;
  breaking: boolean;
  /** our rule id expected to fire (detection recall); omitted for "no change" cases. */
  rule?: string;
  versions?: Version[];
  mutate(spec: Json, v: Version): void;
}

const nullable = (v: Version, schema: Json): Json => (v === '3.1' ? { ...schema, type: [schema.type, 'null'] } : { ...schema, nullable: true });

export function baseSpec(v: Version): Json {
  return {
    openapi: v === '3.0' ? '3.0.3' : '3.1.0',
    info: { title: 'Library', version: '2.4.0' },
    servers: [{ url: 'https://library.example.org/api' }],
    paths: {
      '/books': {
        get: {
          operationId: 'listBooks',
          tags: ['books'],
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
            { name: 'genre', in: 'query', schema: { type: 'string', enum: ['fiction', 'history', 'science'] } },
            { name: 'X-Tenant', in: 'header', schema: { type: 'string' } },
          ],
          responses: {
            '200': { description: 'books', headers: { 'X-Total': { schema: { type: 'integer' } } }, content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Book' } } } } },
            '400': { description: 'bad query', content: { 'application/json': { schema: { $ref: '#/components/schemas/Problem' } } } },
          },
        },
        post: {
          operationId: 'addBook',
          tags: ['books'],
          security: [{ token: ['books:write'] }],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/NewBook' } } } },
          responses: { '201': { description: 'added', content: { 'application/json': { schema: { $ref: '#/components/schemas/Book' } } } } },
        },
      },
      '/books/{isbn}': {
        parameters: [{ name: 'isbn', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9-]{10,17}$' } }],
        get: { operationId: 'getBook', responses: { '200': { description: 'one', content: { 'application/json': { schema: { $ref: '#/components/schemas/Book' } } } }, '404': { description: 'none' } } },
        delete: { operationId: 'removeBook', security: [{ token: ['books:write'] }], responses: { '204': { description: 'gone' } } },
      },
      '/loans': {
        post: {
          operationId: 'lend',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/LoanRequest' } } } },
          responses: { '201': { description: 'lent', content: { 'application/json': { schema: { $ref: '#/components/schemas/Loan' } } } } },
        },
        get: { operationId: 'listLoans', parameters: [{ name: 'member', in: 'query', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'loans', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Loan' } } } } } } },
      },
    },
    components: {
      securitySchemes: { token: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://library.example.org/token', scopes: { 'books:write': 'write', 'books:read': 'read' } } } } },
      schemas: {
        Entity: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' }, created: { type: 'string', format: 'date-time' } } },
        Book: { allOf: [{ $ref: '#/components/schemas/Entity' }, { $ref: '#/components/schemas/BookFields' }] },
        BookFields: {
          type: 'object',
          required: ['title', 'isbn'],
          properties: {
            title: { type: 'string', maxLength: 200 },
            isbn: { type: 'string' },
            pages: { type: 'integer', minimum: 1 },
            genre: { type: 'string', enum: ['fiction', 'history', 'science'] },
            subtitle: nullable(v, { type: 'string' }),
            authors: { type: 'array', items: { type: 'string' }, maxItems: 20 },
          },
        },
        NewBook: {
          type: 'object',
          required: ['title', 'isbn'],
          properties: { title: { type: 'string', maxLength: 200 }, isbn: { type: 'string', pattern: '^[0-9-]+$' }, pages: { type: 'integer', minimum: 1 }, genre: { type: 'string', enum: ['fiction', 'history', 'science'] }, note: { type: 'string' } },
        },
        LoanRequest: { allOf: [{ $ref: '#/components/schemas/LoanCore' }, { type: 'object', properties: { days: { type: 'integer', minimum: 1, maximum: 60, default: 21 } } }] },
        LoanCore: { type: 'object', required: ['isbn', 'member'], properties: { isbn: { type: 'string' }, member: { type: 'string' } } },
        Loan: { allOf: [{ $ref: '#/components/schemas/Entity' }, { $ref: '#/components/schemas/LoanCore' }, { type: 'object', properties: { due: { type: 'string', format: 'date' }, status: { type: 'string', enum: ['open', 'returned'] } } }] },
        Problem: { type: 'object', properties: { title: { type: 'string' }, status: { type: 'integer' } } },
        Draft: { type: 'object', properties: { text: { type: 'string' } } },
      },
    },
  };
}

const S = (spec: Json, name: string) => spec.components.schemas[name];
const op = (spec: Json, path: string, method: string) => spec.paths[path][method];
const param = (spec: Json, path: string, method: string, name: string) => op(spec, path, method).parameters.find((p: Json) => p.name === name);
const rename = (spec: Json, from: string, to: string) => {
  const text = JSON.stringify(spec).split(`"#/components/schemas/${from}"`).join(`"#/components/schemas/${to}"`);
  const out = JSON.parse(text);
  out.components.schemas[to] = out.components.schemas[from];
  delete out.components.schemas[from];
  for (const k of Object.keys(spec)) delete spec[k];
  Object.assign(spec, out);
};

export const CASES: EvalCase[] = [
  // endpoints
  { id: 'endpoint-removed', family: 'endpoints', oasdiff: 'api-removed-without-deprecation ERR', breaking: true, rule: 'api-removed-without-deprecation', mutate: (s) => delete s.paths['/books/{isbn}'].delete },
  { id: 'path-removed', family: 'endpoints', oasdiff: 'api-path-removed-without-deprecation ERR', breaking: true, rule: 'api-removed-without-deprecation', mutate: (s) => delete s.paths['/loans'] },
  { id: 'endpoint-added', family: 'endpoints', oasdiff: 'endpoint-added INFO', breaking: false, rule: 'api-added', mutate: (s) => (s.paths['/members'] = { get: { responses: { '200': { description: 'ok' } } } }) },
  { id: 'path-param-renamed', family: 'endpoints', oasdiff: '(no change)', breaking: false, mutate: (s) => { const p = s.paths['/books/{isbn}']; delete s.paths['/books/{isbn}']; p.parameters[0].name = 'code'; s.paths['/books/{code}'] = p; } },
  { id: 'operation-id-changed', family: 'endpoints', oasdiff: 'api-operation-id-removed INFO', breaking: false, rule: 'api-operation-id-changed', mutate: (s) => (op(s, '/books', 'get').operationId = 'findBooks') },
  { id: 'tag-changed', family: 'endpoints', oasdiff: 'api-tag-removed INFO', breaking: false, rule: 'api-tags-changed', mutate: (s) => (op(s, '/books', 'get').tags = ['catalogue']) },
  { id: 'endpoint-deprecated', family: 'sunset-deprecation', oasdiff: 'endpoint-deprecated INFO', breaking: false, rule: 'api-deprecated', mutate: (s) => (op(s, '/loans', 'get').deprecated = true) },
  // sunset and deprecation
  { id: 'deprecated-endpoint-removed-no-sunset', family: 'sunset-deprecation', oasdiff: 'api-removed-with-deprecation INFO', breaking: false, rule: 'api-removed-with-deprecation', mutate: () => {} },
  { id: 'deprecated-endpoint-removed-before-sunset', family: 'sunset-deprecation', oasdiff: 'api-removed-before-sunset ERR', breaking: true, rule: 'api-removed-before-sunset', mutate: () => {} },
  { id: 'deprecated-endpoint-removed-after-sunset', family: 'sunset-deprecation', oasdiff: '(none: removed as announced)', breaking: false, rule: 'api-removed-after-sunset', mutate: () => {} },
  { id: 'endpoint-sunset-deleted', family: 'sunset-deprecation', oasdiff: 'sunset-deleted ERR', breaking: true, rule: 'api-sunset-deleted', mutate: () => {} },
  { id: 'endpoint-deprecated-invalid-sunset', family: 'sunset-deprecation', oasdiff: 'api-deprecated-sunset-parse ERR', breaking: true, rule: 'api-sunset-date-invalid', mutate: (s) => Object.assign(op(s, '/loans', 'get'), { deprecated: true, 'x-sunset': 'after the summer' }) },
  { id: 'endpoint-sunset-later', family: 'sunset-deprecation', oasdiff: '(no rule: later is fine)', breaking: false, rule: 'api-sunset-date-later', mutate: () => {} },
  { id: 'endpoint-sunset-earlier-future', family: 'sunset-deprecation', oasdiff: '(none with the default 0-day notice)', breaking: false, rule: 'api-sunset-date-changed', mutate: () => {} },
  { id: 'endpoint-sunset-earlier-past', family: 'sunset-deprecation', oasdiff: 'api-sunset-date-changed-too-small ERR', breaking: true, rule: 'api-sunset-date-earlier', mutate: () => {} },
  { id: 'param-deprecated', family: 'sunset-deprecation', oasdiff: 'request-parameter-deprecated INFO', breaking: false, rule: 'request-parameter-deprecated', mutate: (s) => (param(s, '/books', 'get', 'genre').deprecated = true) },
  { id: 'param-deprecated-invalid-sunset', family: 'sunset-deprecation', oasdiff: 'request-parameter-sunset-parse ERR', breaking: true, rule: 'request-parameter-sunset-date-invalid', mutate: (s) => Object.assign(param(s, '/books', 'get', 'genre'), { deprecated: true, 'x-sunset': 'Q4' }) },
  { id: 'param-sunset-deleted', family: 'sunset-deprecation', oasdiff: 'request-parameter-sunset-deleted ERR', breaking: true, rule: 'request-parameter-sunset-deleted', mutate: () => {} },
  { id: 'deprecated-param-removed', family: 'sunset-deprecation', oasdiff: 'request-parameter-removed-with-deprecation INFO', breaking: false, rule: 'request-parameter-removed-with-deprecation', mutate: () => {} },
  { id: 'deprecated-param-removed-before-sunset', family: 'sunset-deprecation', oasdiff: 'request-parameter-removed-before-sunset ERR', breaking: true, rule: 'request-parameter-removed-before-sunset', mutate: () => {} },
  { id: 'param-reactivated', family: 'sunset-deprecation', oasdiff: 'request-parameter-reactivated INFO', breaking: false, rule: 'request-parameter-reactivated', mutate: () => {} },
  // stability
  { id: 'alpha-endpoint-breaking-change', family: 'stability', oasdiff: '(alpha excluded at the default level)', breaking: false, mutate: () => {} },
  { id: 'draft-endpoint-removed', family: 'stability', oasdiff: '(draft excluded)', breaking: false, rule: 'api-removed-unstable', mutate: () => {} },
  { id: 'stability-invalid', family: 'stability', oasdiff: 'api-invalid-stability-level ERR', breaking: true, rule: 'api-stability-level-invalid', mutate: (s) => (op(s, '/books', 'get')['x-stability-level'] = 'ga') },
  { id: 'stability-decreased', family: 'stability', oasdiff: 'api-stability-decreased ERR', breaking: true, rule: 'api-stability-decreased', mutate: (s) => (op(s, '/books', 'get')['x-stability-level'] = 'beta') },
  { id: 'stability-increased', family: 'stability', oasdiff: 'api-stability-increased INFO', breaking: false, rule: 'api-stability-increased', mutate: () => {} },
  { id: 'beta-endpoint-breaking-change', family: 'stability', oasdiff: 'request-property-became-required ERR (beta included)', breaking: true, rule: 'request-property-became-required', mutate: () => {} },
  // parameters
  { id: 'required-param-added', family: 'parameters', oasdiff: 'new-required-request-parameter ERR', breaking: true, rule: 'request-parameter-added-required', mutate: (s) => op(s, '/books', 'get').parameters.push({ name: 'lang', in: 'query', required: true, schema: { type: 'string' } }) },
  { id: 'optional-param-added', family: 'parameters', oasdiff: 'new-optional-request-parameter INFO', breaking: false, rule: 'request-parameter-added', mutate: (s) => op(s, '/books', 'get').parameters.push({ name: 'lang', in: 'query', schema: { type: 'string' } }) },
  { id: 'param-removed', family: 'parameters', oasdiff: 'request-parameter-removed WARN', breaking: true, rule: 'request-parameter-removed', mutate: (s) => (op(s, '/books', 'get').parameters = op(s, '/books', 'get').parameters.filter((p: Json) => p.name !== 'X-Tenant')) },
  { id: 'param-became-required', family: 'parameters', oasdiff: 'request-parameter-became-required ERR', breaking: true, rule: 'request-parameter-became-required', mutate: (s) => (param(s, '/books', 'get', 'genre').required = true) },
  { id: 'param-became-optional', family: 'parameters', oasdiff: 'request-parameter-became-optional INFO', breaking: false, rule: 'request-parameter-became-optional', mutate: (s) => (param(s, '/loans', 'get', 'member').required = false) },
  { id: 'param-default-changed', family: 'parameter-default', oasdiff: 'request-parameter-default-value-changed ERR', breaking: true, rule: 'request-parameter-default-changed', mutate: (s) => (param(s, '/books', 'get', 'limit').schema.default = 50) },
  { id: 'param-default-removed', family: 'parameter-default', oasdiff: 'request-parameter-default-value-removed ERR', breaking: true, rule: 'request-parameter-default-changed', mutate: (s) => delete param(s, '/books', 'get', 'limit').schema.default },
  { id: 'param-default-added', family: 'parameter-default', oasdiff: 'request-parameter-default-value-added ERR', breaking: true, rule: 'request-parameter-default-changed', mutate: (s) => (param(s, '/books', 'get', 'genre').schema.default = 'fiction') },
  { id: 'body-default-changed', family: 'parameter-default', oasdiff: 'request-property-default-value-changed INFO', breaking: false, rule: 'request-default-changed', mutate: (s) => (S(s, 'LoanRequest').allOf[1].properties.days.default = 14) },
  { id: 'param-max-decreased', family: 'parameters', oasdiff: 'request-parameter-max-decreased ERR', breaking: true, rule: 'request-max-decreased', mutate: (s) => (param(s, '/books', 'get', 'limit').schema.maximum = 50) },
  { id: 'param-max-increased', family: 'parameters', oasdiff: 'request-parameter-max-increased INFO', breaking: false, rule: 'request-max-increased', mutate: (s) => (param(s, '/books', 'get', 'limit').schema.maximum = 500) },
  { id: 'param-enum-value-removed', family: 'parameters', oasdiff: 'request-parameter-enum-value-removed ERR', breaking: true, rule: 'request-enum-value-removed', mutate: (s) => (param(s, '/books', 'get', 'genre').schema.enum = ['fiction', 'history']) },
  { id: 'param-enum-value-added', family: 'parameters', oasdiff: 'request-parameter-enum-value-added INFO', breaking: false, rule: 'request-enum-value-added', mutate: (s) => param(s, '/books', 'get', 'genre').schema.enum.push('poetry') },
  { id: 'param-type-changed', family: 'parameters', oasdiff: 'request-parameter-type-changed ERR', breaking: true, rule: 'request-type-changed', mutate: (s) => (param(s, '/books', 'get', 'limit').schema = { type: 'string' }) },
  { id: 'path-param-pattern-added', family: 'parameters', oasdiff: 'request-parameter-pattern-added ERR', breaking: true, rule: 'request-pattern-added', mutate: (s) => (param(s, '/loans', 'get', 'member').schema.pattern = '^m-[0-9]+$') },
  { id: 'param-pattern-removed', family: 'parameters', oasdiff: 'request-parameter-pattern-removed INFO', breaking: false, rule: 'request-pattern-removed', mutate: (s) => delete s.paths['/books/{isbn}'].parameters[0].schema.pattern },
  // request body
  { id: 'request-body-became-optional', family: 'request-body', oasdiff: 'request-body-became-optional INFO', breaking: false, rule: 'request-body-became-optional', mutate: (s) => (op(s, '/books', 'post').requestBody.required = false) },
  { id: 'request-media-type-removed', family: 'request-body', oasdiff: 'request-body-media-type-removed ERR', breaking: true, rule: 'request-media-type-removed', mutate: (s) => (op(s, '/books', 'post').requestBody.content = { 'application/xml': op(s, '/books', 'post').requestBody.content['application/json'] }) },
  { id: 'request-media-type-added', family: 'request-body', oasdiff: 'request-body-media-type-added INFO', breaking: false, rule: 'request-media-type-added', mutate: (s) => (op(s, '/books', 'post').requestBody.content['application/xml'] = { schema: { type: 'object' } }) },
  { id: 'request-property-required', family: 'request-properties', oasdiff: 'request-property-became-required ERR', breaking: true, rule: 'request-property-became-required', mutate: (s) => S(s, 'NewBook').required.push('pages') },
  { id: 'request-property-optional', family: 'request-properties', oasdiff: 'request-property-became-optional INFO', breaking: false, rule: 'request-property-became-optional', mutate: (s) => (S(s, 'NewBook').required = ['title']) },
  { id: 'request-required-property-added', family: 'request-properties', oasdiff: 'new-required-request-property ERR', breaking: true, rule: 'request-property-added-required', mutate: (s) => { S(s, 'NewBook').properties.publisher = { type: 'string' }; S(s, 'NewBook').required.push('publisher'); } },
  { id: 'request-optional-property-added', family: 'request-properties', oasdiff: 'new-optional-request-property INFO', breaking: false, rule: 'request-property-added', mutate: (s) => (S(s, 'NewBook').properties.publisher = { type: 'string' }) },
  { id: 'request-property-removed', family: 'warning', oasdiff: 'request-property-removed WARN', breaking: true, rule: 'request-property-removed', mutate: (s) => delete S(s, 'NewBook').properties.note },
  { id: 'request-allof-branch-removed', family: 'warning', oasdiff: 'request-body-all-of-removed WARN', breaking: true, rule: 'request-all-of-branch-removed', mutate: (s) => (S(s, 'LoanRequest').allOf = [S(s, 'LoanRequest').allOf[0]]) },
  { id: 'request-allof-branch-added', family: 'composition', oasdiff: 'request-body-all-of-added ERR', breaking: true, rule: 'request-all-of-branch-added', mutate: (s) => S(s, 'LoanRequest').allOf.push({ type: 'object', properties: { branch: { type: 'string' } } }) },
  { id: 'request-max-length-decreased', family: 'request-properties', oasdiff: 'request-property-max-length-decreased ERR', breaking: true, rule: 'request-max-length-decreased', mutate: (s) => (S(s, 'NewBook').properties.title.maxLength = 100) },
  { id: 'request-max-length-increased', family: 'request-properties', oasdiff: 'request-property-max-length-increased INFO', breaking: false, rule: 'request-max-length-increased', mutate: (s) => (S(s, 'NewBook').properties.title.maxLength = 500) },
  { id: 'request-min-increased', family: 'request-properties', oasdiff: 'request-property-min-increased ERR', breaking: true, rule: 'request-min-increased', mutate: (s) => (S(s, 'NewBook').properties.pages.minimum = 10) },
  { id: 'request-enum-value-removed', family: 'request-properties', oasdiff: 'request-property-enum-value-removed ERR', breaking: true, rule: 'request-enum-value-removed', mutate: (s) => (S(s, 'NewBook').properties.genre.enum = ['fiction']) },
  { id: 'request-type-generalized', family: 'request-properties', oasdiff: 'request-property-type-generalized INFO', breaking: false, rule: 'request-type-widened', mutate: (s) => (S(s, 'NewBook').properties.pages.type = 'number') },
  { id: 'request-type-changed', family: 'request-properties', oasdiff: 'request-property-type-changed ERR', breaking: true, rule: 'request-type-changed', mutate: (s) => (S(s, 'NewBook').properties.pages = { type: 'string' }) },
  { id: 'request-pattern-changed', family: 'request-properties', oasdiff: 'request-property-pattern-changed WARN', breaking: true, rule: 'request-pattern-changed', mutate: (s) => (S(s, 'NewBook').properties.isbn.pattern = '^[0-9]+$') },
  { id: 'request-became-readonly', family: 'request-properties', oasdiff: 'request-optional-property-became-read-only INFO', breaking: false, rule: 'request-property-became-read-only', mutate: (s) => (S(s, 'NewBook').properties.note.readOnly = true) },
  // nullability
  { id: 'response-became-nullable', family: 'nullability', oasdiff: 'response-property-became-nullable ERR', breaking: true, rule: 'response-nullable-added', mutate: (s, v) => (S(s, 'BookFields').properties.pages = nullable(v, { type: 'integer', minimum: 1 })) },
  { id: 'response-became-not-nullable', family: 'nullability', oasdiff: 'response-property-became-not-nullable INFO', breaking: false, rule: 'response-nullable-removed', mutate: (s) => (S(s, 'BookFields').properties.subtitle = { type: 'string' }) },
  { id: 'request-became-not-nullable', family: 'nullability', oasdiff: 'request-property-became-not-nullable ERR', breaking: true, rule: 'request-nullable-removed', mutate: () => {} },
  { id: 'request-became-nullable', family: 'nullability', oasdiff: 'request-property-became-nullable INFO', breaking: false, rule: 'request-nullable-added', mutate: (s, v) => (S(s, 'NewBook').properties.note = nullable(v, { type: 'string' })) },
  { id: 'response-oneof-null-wrap', family: 'nullability', versions: ['3.1'], oasdiff: 'response-property-became-nullable ERR', breaking: true, rule: 'response-nullable-added', mutate: (s) => (S(s, 'BookFields').properties.pages = { oneOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] }) },
  { id: 'response-nullable-to-anyof-null', family: 'nullability', versions: ['3.1'], oasdiff: '(same schema)', breaking: false, mutate: (s) => (S(s, 'BookFields').properties.subtitle = { anyOf: [{ type: 'string' }, { type: 'null' }] }) },
  { id: 'request-anyof-null-unwrap', family: 'nullability', versions: ['3.1'], oasdiff: 'request-property-became-not-nullable ERR', breaking: true, rule: 'request-nullable-removed', mutate: () => {} },
  // responses
  { id: 'response-property-removed', family: 'response-properties', oasdiff: 'response-optional-property-removed WARN', breaking: true, rule: 'response-property-removed', mutate: (s) => delete S(s, 'BookFields').properties.authors },
  { id: 'response-required-property-removed', family: 'response-properties', oasdiff: 'response-required-property-removed ERR', breaking: true, rule: 'response-property-removed', mutate: (s) => { delete S(s, 'BookFields').properties.isbn; S(s, 'BookFields').required = ['title']; } },
  { id: 'response-property-added', family: 'response-properties', oasdiff: 'response-optional-property-added INFO', breaking: false, rule: 'response-property-added', mutate: (s) => (S(s, 'BookFields').properties.language = { type: 'string' }) },
  { id: 'response-property-became-optional', family: 'response-properties', oasdiff: 'response-property-became-optional ERR', breaking: true, rule: 'response-property-became-optional', mutate: (s) => (S(s, 'BookFields').required = ['title']) },
  { id: 'response-property-became-required', family: 'response-properties', oasdiff: 'response-property-became-required INFO', breaking: false, rule: 'response-property-became-required', mutate: (s) => S(s, 'BookFields').required.push('pages') },
  { id: 'response-enum-value-added', family: 'response-properties', oasdiff: 'response-property-enum-value-added WARN', breaking: true, rule: 'response-enum-value-added', mutate: (s) => S(s, 'Loan').allOf[2].properties.status.enum.push('lost') },
  { id: 'response-enum-value-removed', family: 'response-properties', oasdiff: 'response-property-enum-value-removed INFO', breaking: false, rule: 'response-enum-value-removed', mutate: (s) => (S(s, 'Loan').allOf[2].properties.status.enum = ['open']) },
  { id: 'response-max-length-increased', family: 'response-properties', oasdiff: 'response-property-max-length-increased ERR', breaking: true, rule: 'response-max-length-increased', mutate: (s) => (S(s, 'BookFields').properties.title.maxLength = 400) },
  { id: 'response-max-length-decreased', family: 'response-properties', oasdiff: '(narrower response: no rule)', breaking: false, rule: 'response-max-length-decreased', mutate: (s) => (S(s, 'BookFields').properties.title.maxLength = 100) },
  { id: 'response-type-generalized', family: 'response-properties', oasdiff: 'response-property-type-generalized ERR', breaking: true, rule: 'response-type-widened', mutate: (s) => (S(s, 'BookFields').properties.pages.type = 'number') },
  { id: 'response-type-specialized', family: 'response-properties', oasdiff: 'response-property-type-specialized INFO', breaking: false, rule: 'response-type-narrowed', mutate: () => {} },
  { id: 'response-pattern-changed', family: 'response-grading', oasdiff: 'response-property-pattern-changed INFO', breaking: false, rule: 'response-pattern-changed', mutate: () => {} },
  { id: 'response-pattern-added', family: 'response-grading', oasdiff: 'response-property-pattern-added INFO', breaking: false, rule: 'response-pattern-added', mutate: (s) => (S(s, 'BookFields').properties.title.pattern = '^\\S') },
  { id: 'response-non-success-removed', family: 'response-grading', oasdiff: 'response-non-success-status-removed INFO', breaking: false, rule: 'response-non-success-status-removed', mutate: (s) => delete op(s, '/books', 'get').responses['400'] },
  { id: 'response-404-removed', family: 'response-grading', oasdiff: 'response-non-success-status-removed INFO', breaking: false, rule: 'response-non-success-status-removed', mutate: (s) => delete op(s, '/books/{isbn}', 'get').responses['404'] },
  { id: 'response-success-removed', family: 'responses', oasdiff: 'response-success-status-removed ERR', breaking: true, rule: 'response-success-status-removed', mutate: (s) => (op(s, '/books/{isbn}', 'delete').responses = { '200': { description: 'gone' } }) },
  { id: 'response-status-added', family: 'responses', oasdiff: 'response-non-success-status-added INFO', breaking: false, rule: 'response-status-added', mutate: (s) => (op(s, '/books', 'post').responses['409'] = { description: 'exists' }) },
  { id: 'response-media-type-removed', family: 'responses', oasdiff: 'response-media-type-removed ERR', breaking: true, rule: 'response-media-type-removed', mutate: (s) => (op(s, '/books/{isbn}', 'get').responses['200'].content = { 'application/xml': { schema: { type: 'object' } } }) },
  { id: 'response-header-removed', family: 'responses', oasdiff: 'optional-response-header-removed WARN', breaking: true, rule: 'response-header-removed', mutate: (s) => delete op(s, '/books', 'get').responses['200'].headers },
  { id: 'response-header-added', family: 'responses', oasdiff: 'response-header-added INFO', breaking: false, rule: 'response-header-added', mutate: (s) => (op(s, '/books', 'get').responses['200'].headers['X-Next'] = { schema: { type: 'string' } }) },
  // composition
  { id: 'response-allof-branch-removed', family: 'composition', oasdiff: 'response-body-all-of-removed INFO (+ response property removed WARN)', breaking: true, rule: 'response-property-removed', mutate: (s) => (S(s, 'Loan').allOf = S(s, 'Loan').allOf.slice(0, 2)) },
  { id: 'response-allof-branch-added', family: 'composition', oasdiff: 'response-body-all-of-added INFO', breaking: false, rule: 'response-all-of-branch-added', mutate: (s) => S(s, 'Book').allOf.push({ type: 'object', properties: { rating: { type: 'number' } } }) },
  { id: 'allof-duplicate-branch', family: 'duplicate-allof', oasdiff: '(same schema; oasdiff reports request-body-all-of-added without --flatten-allof)', breaking: false, mutate: (s) => S(s, 'LoanRequest').allOf.push(S(s, 'LoanRequest').allOf[0]) },
  { id: 'allof-duplicate-response-branch', family: 'duplicate-allof', oasdiff: '(same schema)', breaking: false, mutate: (s) => S(s, 'Book').allOf.push({ $ref: '#/components/schemas/Entity' }) },
  { id: 'allof-component-renamed', family: 'composition-noise', oasdiff: '(same schema)', breaking: false, mutate: (s) => rename(s, 'BookFields', 'BookFields-7f3a9c') },
  { id: 'allof-base-renamed', family: 'composition-noise', oasdiff: '(same schema)', breaking: false, mutate: (s) => rename(s, 'Entity', 'Entity_v2') },
  { id: 'allof-request-component-renamed', family: 'composition-noise', oasdiff: '(same schema)', breaking: false, mutate: (s) => rename(s, 'LoanCore', 'LoanCore-2b1d') },
  { id: 'allof-property-moved', family: 'composition-noise', oasdiff: '(same composed schema)', breaking: false, rule: 'all-of-reorganized', mutate: (s) => { S(s, 'Entity').properties.title = S(s, 'BookFields').properties.title; delete S(s, 'BookFields').properties.title; } },
  { id: 'allof-inlined', family: 'composition-noise', oasdiff: '(same composed schema)', breaking: false, mutate: () => {} },
  { id: 'oneof-branch-added-response', family: 'composition', oasdiff: 'response-property-one-of-added ERR', breaking: true, rule: 'response-one-of-branch-added', mutate: () => {} },
  { id: 'oneof-branch-removed-request', family: 'composition', oasdiff: 'request-property-one-of-removed ERR', breaking: true, rule: 'request-one-of-branch-removed', mutate: () => {} },
  { id: 'plain-to-oneof-request', family: 'composition', oasdiff: 'request-property-one-of-added INFO', breaking: false, rule: 'request-one-of-branch-added', mutate: (s) => (S(s, 'NewBook').properties.pages = { oneOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^[0-9]+$' }] }) },
  // components
  { id: 'unused-component-changed', family: 'components', oasdiff: '(not reachable: not diffed)', breaking: false, rule: 'component-schema-changed', mutate: (s) => (S(s, 'Draft').required = ['text']) },
  { id: 'unused-component-removed', family: 'components', oasdiff: 'api-schema-removed INFO', breaking: false, rule: 'component-schema-removed', mutate: (s) => delete s.components.schemas.Draft },
  // security
  { id: 'security-scope-added', family: 'security', oasdiff: 'api-security-scope-added INFO (we: breaking)', breaking: true, rule: 'api-security-scope-added', mutate: (s) => op(s, '/books', 'post').security[0].token.push('books:read') },
  { id: 'security-removed', family: 'security', oasdiff: 'api-security-removed INFO', breaking: false, rule: 'api-security-removed', mutate: (s) => delete op(s, '/books/{isbn}', 'delete').security },
];

/** Cases whose base differs from the common base spec (the change needs a particular starting point). */
export const BASE_TWEAKS: Record<string, (spec: Json, v: Version) => void> = {
  'response-type-specialized': (s) => (S(s, 'Problem').properties.status = { type: 'number' }),
  'response-pattern-changed': (s) => (S(s, 'BookFields').properties.isbn.pattern = '^[0-9-]{10,17}$'),
  'deprecated-endpoint-removed-no-sunset': (s) => (op(s, '/loans', 'get').deprecated = true),
  'deprecated-endpoint-removed-before-sunset': (s) => Object.assign(op(s, '/loans', 'get'), { deprecated: true, 'x-sunset': '2999-12-31' }),
  'deprecated-endpoint-removed-after-sunset': (s) => Object.assign(op(s, '/loans', 'get'), { deprecated: true, 'x-sunset': '2020-12-31' }),
  'endpoint-sunset-deleted': (s) => Object.assign(op(s, '/loans', 'get'), { deprecated: true, 'x-sunset': '2027-12-31' }),
  'endpoint-sunset-later': (s) => Object.assign(op(s, '/loans', 'get'), { deprecated: true, 'x-sunset': '2027-06-30' }),
  'endpoint-sunset-earlier-future': (s) => Object.assign(op(s, '/loans', 'get'), { deprecated: true, 'x-sunset': '2028-06-30' }),
  'endpoint-sunset-earlier-past': (s) => Object.assign(op(s, '/loans', 'get'), { deprecated: true, 'x-sunset': '2028-06-30' }),
  'param-sunset-deleted': (s) => Object.assign(param(s, '/books', 'get', 'genre'), { deprecated: true, 'x-sunset': '2027-12-31' }),
  'deprecated-param-removed': (s) => (param(s, '/books', 'get', 'X-Tenant').deprecated = true),
  'deprecated-param-removed-before-sunset': (s) => Object.assign(param(s, '/books', 'get', 'X-Tenant'), { deprecated: true, 'x-sunset': '2999-01-01' }),
  'param-reactivated': (s) => (param(s, '/books', 'get', 'genre').deprecated = true),
  'alpha-endpoint-breaking-change': (s) => (op(s, '/books', 'post')['x-stability-level'] = 'alpha'),
  'draft-endpoint-removed': (s) => (op(s, '/books/{isbn}', 'delete')['x-stability-level'] = 'draft'),
  'stability-increased': (s) => (op(s, '/books', 'get')['x-stability-level'] = 'beta'),
  'beta-endpoint-breaking-change': (s) => (op(s, '/books', 'post')['x-stability-level'] = 'beta'),
  'request-became-not-nullable': (s, v) => (S(s, 'NewBook').properties.note = nullable(v, { type: 'string' })),
  'request-anyof-null-unwrap': (s) => (S(s, 'NewBook').properties.note = { anyOf: [{ type: 'string' }, { type: 'null' }] }),
  'oneof-branch-added-response': (s) => (S(s, 'BookFields').properties.pages = { oneOf: [{ type: 'integer' }, { type: 'string' }] }),
  'oneof-branch-removed-request': (s) => (S(s, 'NewBook').properties.pages = { oneOf: [{ type: 'integer' }, { type: 'string' }] }),
};

/** Head-side edits of the cases whose base was tweaked (applied after the tweak). */
export const HEAD_EDITS: Record<string, (spec: Json, v: Version) => void> = {
  'response-type-specialized': (s) => (S(s, 'Problem').properties.status = { type: 'integer' }),
  'response-pattern-changed': (s) => (S(s, 'BookFields').properties.isbn.pattern = '^[0-9]{13}$'),
  'deprecated-endpoint-removed-no-sunset': (s) => delete s.paths['/loans'].get,
  'deprecated-endpoint-removed-before-sunset': (s) => delete s.paths['/loans'].get,
  'deprecated-endpoint-removed-after-sunset': (s) => delete s.paths['/loans'].get,
  'endpoint-sunset-deleted': (s) => delete op(s, '/loans', 'get')['x-sunset'],
  'endpoint-sunset-later': (s) => (op(s, '/loans', 'get')['x-sunset'] = '2028-06-30'),
  'endpoint-sunset-earlier-future': (s) => (op(s, '/loans', 'get')['x-sunset'] = '2027-06-30'),
  'endpoint-sunset-earlier-past': (s) => (op(s, '/loans', 'get')['x-sunset'] = '2024-06-30'),
  'param-sunset-deleted': (s) => delete param(s, '/books', 'get', 'genre')['x-sunset'],
  'deprecated-param-removed': (s) => (op(s, '/books', 'get').parameters = op(s, '/books', 'get').parameters.filter((p: Json) => p.name !== 'X-Tenant')),
  'deprecated-param-removed-before-sunset': (s) => (op(s, '/books', 'get').parameters = op(s, '/books', 'get').parameters.filter((p: Json) => p.name !== 'X-Tenant')),
  'param-reactivated': (s) => delete param(s, '/books', 'get', 'genre').deprecated,
  'alpha-endpoint-breaking-change': (s) => S(s, 'NewBook').required.push('pages'),
  'draft-endpoint-removed': (s) => delete s.paths['/books/{isbn}'].delete,
  'stability-increased': (s) => (op(s, '/books', 'get')['x-stability-level'] = 'stable'),
  'beta-endpoint-breaking-change': (s) => S(s, 'NewBook').required.push('pages'),
  'request-became-not-nullable': (s) => (S(s, 'NewBook').properties.note = { type: 'string' }),
  'request-anyof-null-unwrap': (s) => (S(s, 'NewBook').properties.note = { type: 'string' }),
  'oneof-branch-added-response': (s) => S(s, 'BookFields').properties.pages.oneOf.push({ type: 'boolean' }),
  'oneof-branch-removed-request': (s) => S(s, 'NewBook').properties.pages.oneOf.pop(),
  // the allOf of Book written out inline at every use: the composed schema is the same
  'allof-inlined': (s) => {
    const inline = JSON.parse(JSON.stringify({ type: 'object', required: ['id', 'title', 'isbn'], properties: { ...S(s, 'Entity').properties, ...S(s, 'BookFields').properties } }));
    const text = JSON.stringify(s).split('{"$ref":"#/components/schemas/Book"}').join(JSON.stringify(inline));
    const out = JSON.parse(text);
    delete out.components.schemas.Book;
    for (const k of Object.keys(s)) delete s[k];
    Object.assign(s, out);
  },
};
