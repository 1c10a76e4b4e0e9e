import http from "node:http";
import { answerRefusedRequests, type RouteHandler } from "../core/http.ts";
import { enforceWriteDeadline } from "../core/write-deadline.ts";

// A realtime node's own HTTP server (bin/realtime.ts): Socket.IO attaches to it, and it answers
// GET /health and /metrics, 404 otherwise. Every connection has the write deadline as the
// gateway's (core/write-deadline.ts): a client that stops reading, an HTTP answer or a WebSocket
// that takes none of its pending bytes, is cut off and its buffers freed.

export interface NodeHttpServer {
  server: http.Server;
  /** Adds a GET route (exact path). */
  route(path: string, handler: RouteHandler): void;
}

export function createNodeHttpServer(options: { writeDeadlineMs: number; onSlowReaderCut(): void }): NodeHttpServer {
  const routes = new Map<string, RouteHandler>();
  const server = http.createServer((req, res) => {
    const route = routes.get(new URL(req.url ?? "/", "http://localhost").pathname);
    if (req.method === "GET" && route) return void Promise.resolve(route(req, res)).catch(() => res.destroy());
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
  });
  answerRefusedRequests(server);
  const stop = enforceWriteDeadline(server, { deadlineMs: options.writeDeadlineMs, onCut: options.onSlowReaderCut });
  server.once("close", stop);
  return { server, route: (path, handler) => void routes.set(path, handler) };
}
