import { type ClientRequest, request } from "node:http";

// One HTTP request from a chosen loopback address (127.0.0.x are distinct clients to the gateway's
// per-address limits), on its own connection, its answer read whole.

export interface LoopbackAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** GET `path` of `baseUrl` from `localAddress`, or POST `body` as JSON when given. */
export function requestFrom(baseUrl: string, localAddress: string, path: string, body?: string): { req: ClientRequest; answer: Promise<LoopbackAnswer> } {
  const url = new URL(baseUrl);
  const req = request({
    host: url.hostname,
    port: url.port,
    path,
    method: body === undefined ? "GET" : "POST",
    localAddress,
    agent: false,
    headers: body === undefined ? {} : { "content-type": "application/json" },
  });
  const answer = new Promise<LoopbackAnswer>((resolve, reject) => {
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
  req.end(body);
  return { req, answer };
}
