import { request } from "node:http";

// Raw GraphQL requests over HTTP, for tests that must see what was sent: the very bytes (fetch would
// decompress them), the status and every header.

export interface Ask {
  method?: "GET" | "POST";
  query?: string;
  operationName?: string | null;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** A POST body as is (instead of one built from the fields above). */
  raw?: string;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw request (fetch would decompress and hide what was sent). */
export function ask(url: string, a: Ask): Promise<Reply> {
  const fields: Record<string, unknown> = {};
  if (a.query !== undefined) fields.query = a.query;
  if (a.operationName !== undefined) fields.operationName = a.operationName;
  if (a.variables !== undefined) fields.variables = a.variables;
  if (a.extensions !== undefined) fields.extensions = a.extensions;
  const get = a.method === "GET";
  const search = new URLSearchParams();
  if (get) for (const [name, value] of Object.entries(fields)) if (value !== null) search.set(name, typeof value === "string" ? value : JSON.stringify(value));
  const payload = get ? undefined : (a.raw ?? JSON.stringify(fields));
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/graphql${get ? `?${search}` : ""}`,
      { method: a.method ?? "POST", headers: { ...(get ? {} : { "content-type": "application/json" }), ...a.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** Headers that differ between any two answers (per request, per clock, per hit). */
const PER_ANSWER = new Set(["date", "x-request-id", "x-cache", "age", "ratelimit-remaining", "ratelimit-reset", "connection", "keep-alive"]);
export const lasting = (headers: Reply["headers"]) => Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_ANSWER.has(name)));
