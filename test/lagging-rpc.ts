/**
 * A JSON-RPC proxy in front of a node (anvil) that can pretend to lag: while `lagTo(n)` holds, it
 * answers as a node whose head is block n — eth_blockNumber says n, eth_getBlockByNumber("latest")
 * is block n, a block above n is null (not there yet), eth_getLogs ranges end at n. Everything else
 * is forwarded. Batched requests (JSON arrays) are answered element by element. Every request is
 * recorded (`requests()`), so tests can count the calls of a kind. Listens on 127.0.0.1, a free port.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

interface RpcRequest {
  jsonrpc: "2.0";
  id: number | string | null;
  method: string;
  params?: unknown[];
}

export interface LaggingRpc {
  url: string;
  /** Answer as a node whose head is `block` (null: pass everything through). */
  lagTo(block: bigint | null): void;
  /** How many head requests (eth_blockNumber, getBlockByNumber("latest")) were answered with the lagging head. */
  laggedHeads(): number;
  /** Answers the next `count` requests of `method` with a retryable node error (-32005, limit exceeded) instead of forwarding them. */
  failNext(method: string, count: number): void;
  /** Every request received so far (method and params), in arrival order. */
  requests(): readonly { method: string; params: unknown[] }[];
  close(): Promise<void>;
}

const hex = (n: bigint) => `0x${n.toString(16)}`;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startLaggingRpc(upstream: string): Promise<LaggingRpc> {
  let head: bigint | null = null;
  let lagged = 0;
  const received: { method: string; params: unknown[] }[] = [];
  const failures = new Map<string, number>();

  const forward = async (request: RpcRequest): Promise<unknown> => {
    const response = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
    return response.json();
  };

  const answer = async (request: RpcRequest): Promise<unknown> => {
    received.push({ method: request.method, params: request.params ?? [] });
    const failing = failures.get(request.method) ?? 0;
    if (failing > 0) {
      failures.set(request.method, failing - 1);
      return { jsonrpc: "2.0", id: request.id, error: { code: -32005, message: "limit exceeded" } };
    }
    const reply = (result: unknown) => ({ jsonrpc: "2.0", id: request.id, result });
    if (head === null) return forward(request);
    const params = request.params ?? [];
    if (request.method === "eth_blockNumber") {
      lagged++;
      return reply(hex(head));
    }
    if (request.method === "eth_getBlockByNumber") {
      const tag = params[0];
      if (tag === "latest" || tag === "safe" || tag === "finalized" || tag === "pending") {
        lagged++;
        return forward({ ...request, params: [hex(head), ...params.slice(1)] });
      }
      if (typeof tag === "string" && BigInt(tag) > head) return reply(null);
    }
    if (request.method === "eth_getLogs") {
      const filter = params[0] as { toBlock?: string } | undefined;
      if (filter?.toBlock?.startsWith("0x") && BigInt(filter.toBlock) > head) {
        return forward({ ...request, params: [{ ...filter, toBlock: hex(head) }] });
      }
    }
    return forward(request);
  };

  const server = createServer((req, res) => {
    readBody(req)
      .then(async (text) => {
        const body = JSON.parse(text) as RpcRequest | RpcRequest[];
        const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(out));
      })
      .catch((error: unknown) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    lagTo(block) {
      head = block;
    },
    laggedHeads: () => lagged,
    requests: () => received,
    failNext(method, count) {
      failures.set(method, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
