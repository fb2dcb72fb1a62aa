/** What an endpoint is (the table is endpoints.ts; a target may declare its own: targets/spec.ts DeclaredEndpoint). */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface EndpointDef {
  readonly method: HttpMethod;
  /** Path template; `{name}` marks a path parameter. */
  readonly path: string;
  /** 'single' | 'list' envelope, 'none' when the spec does not show a response body. */
  readonly response: 'single' | 'list' | 'none';
  /** true when the endpoint needs no Bearer token (the two auth calls). */
  readonly anonymous?: boolean;
}
