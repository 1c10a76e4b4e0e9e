import http, { type IncomingMessage, type ServerResponse } from "node:http";
import net, { type AddressInfo } from "node:net";
import { HeaderMap, type ApolloServer, type BaseContext, type HTTPGraphQLRequest } from "@apollo/server";
import { GRAPHQL_ANSWER_TYPES, graphqlAnswerType } from "./accept.ts";
import { compress, encodingFor, type CompressionSettings, type ContentEncoding } from "./compression.ts";
import { ErrorCode } from "./errors.ts";
import { currentRequestScope, requestIdOf, runInRequestScope } from "./request-scope.ts";
import { serveTraced } from "./tracing.ts";
import { nestsDeeperThan, MAX_JSON_DEPTH } from "./json-depth.ts";
import type { Registry } from "prom-client";
import { DEFAULT_WRITE_DEADLINE_MS, enforceWriteDeadline, slowReaderCounter } from "./write-deadline.ts";
import { trackConnections } from "./track-connections.ts";

// A small HTTP front for Apollo Server (what `startStandaloneServer` does, plus the things a public
// endpoint needs): a hard body limit answered with 413 before parsing, clear JSON for malformed
// bodies, extra routes such as /health, and keep-alive tuned for a gateway in front.

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

export interface GraphQLHttpOptions<TContext extends BaseContext> {
  server: ApolloServer<TContext>;
  context: (req: IncomingMessage) => Promise<TContext>;
  maxBodyBytes: number;
  graphqlPath?: string;
  routes?: Record<string, RouteHandler>;
  /** Routes by path pattern (e.g. `/wallets/{address}/bets.csv`), tried in order after `routes`. */
  patternRoutes?: readonly { pattern: RegExp; handler: RouteHandler }[];
  /**
   * The page a browser gets at the GraphQL path: a GET or HEAD that accepts `text/html` and carries
   * neither `query` nor `extensions` (GraphiQL, web/). Every other request there is GraphQL.
   * Absent: always GraphQL.
   */
  browserPage?: RouteHandler;
  /** Runs first for every request but OPTIONS, before routing (a per-client cap on requests in flight); false: it answered (429) or the client is gone. */
  limitInFlight?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
  /** Runs for a GraphQL request once its whole body has arrived, before any shortcut or Apollo Server (one of the process's seats); false: it answered (503) or the client is gone. */
  takeSeat?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
  /** Runs once serving a request has ended (its answer ended or failed): gives back the seat `takeSeat` gave it, if any. */
  leaveSeat?: (res: ServerResponse) => void;
  /** Runs before every GraphQL request; false means it has already answered (e.g. 429). */
  admit?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** The same door for the fixed routes and unknown paths (404), at their own flat price; false: it answered (429). */
  admitRoute?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** Compress answers the client accepts compressed (core/compression.ts); off when absent. */
  compression?: CompressionSettings;
  /** Answers GraphQL requests it can without entering Apollo Server (e.g. stored bytes); see AnswerBeforeGraphQL. */
  beforeGraphQL?: AnswerBeforeGraphQL;
  /** The client's address, kept in the request scope for what the request calls (the gateway forwards it to subgraphs). */
  clientAddressOf?: (req: IncomingMessage) => string;
}

/** A complete GraphQL answer, as Apollo Server renders it or as a shortcut replays it. */
export interface CompleteAnswer {
  status: number;
  headers: Iterable<[string, string]>;
  /** Apollo Server's string, or the very bytes a shortcut kept (written without encoding it again). */
  body: string | Buffer;
  /** The UTF-8 bytes of a string `body`, when already at hand: written (and compressed) instead of it. */
  bytes?: Buffer;
  /** The body already compressed in `encoding`, when kept (written as is instead of compressing again). */
  encoded?(encoding: ContentEncoding): Buffer | undefined;
}

/** What was written of an answer: the encoding and its bytes, or identity (undefined). */
export type SentEncoding = { encoding: ContentEncoding; bytes: Buffer } | undefined;

/**
 * A generic hook in front of Apollo Server, run after `admit` (so the rate limit applies) with the
 * request exactly as Apollo Server would get it. `answer` returns a ready answer — written with
 * the same headers, status and compression rules as Apollo Server's — or undefined to let Apollo
 * Server answer; it must never throw for a request it cannot serve. `answered` sees every complete
 * answer written, Apollo Server's (`from: "graphql"`) and its own (`from: "before"`), with the
 * compressed bytes that were sent.
 */
export interface AnswerBeforeGraphQL {
  /** `incoming`: the HTTP request it was read from (its client's address). */
  answer(request: HTTPGraphQLRequest, incoming?: IncomingMessage): Promise<CompleteAnswer | undefined>;
  answered?(request: HTTPGraphQLRequest, answer: CompleteAnswer, sent: SentEncoding, from: "graphql" | "before"): void;
}

/**
 * Apollo Server's `stringifyResult`, writing what its default writes (`JSON.stringify` and a
 * newline), with the answer's UTF-8 bytes kept for the request being served: the front writes those
 * (renderedBytesOf). Written as a string, an answer (112 KB for betResults(100) with proofs) was
 * copied on the heap twice, flattened to measure its Content-Length and again behind the response
 * head Node prepends to it, then encoded by writev: ~200 KB of heap a request, 18 % of what
 * `npm start` allocated under betResults load.
 */
export function stringifyAnswer(value: unknown): string {
  const json = JSON.stringify(value);
  const text = `${json}\n`;
  const scope = currentRequestScope();
  if (scope) {
    const length = Buffer.byteLength(json);
    const bytes = Buffer.allocUnsafe(length + 1);
    // All ASCII (as answers of decimal strings are): copied as is, not encoded character by character.
    bytes.write(json, length === json.length ? "latin1" : "utf8");
    bytes[length] = 0x0a;
    scope.renderedAnswer = { text, bytes };
  }
  return text;
}

/** The UTF-8 bytes of `text`, when the renderer put them together for this very answer of the request being served (once). */
export function renderedBytesOf(text: string): Buffer | undefined {
  const scope = currentRequestScope();
  const rendered = scope?.renderedAnswer;
  if (!scope || rendered?.text !== text) return undefined;
  scope.renderedAnswer = undefined;
  return rendered.bytes;
}

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An HttpError as every REST answer carries it: `{ errors: [{ message, extensions: { code } }] }`. */
export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, { errors: [{ message: error.message, extensions: { code: error.code } }] });
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxBytes) throw new HttpError(413, "PAYLOAD_TOO_LARGE", `Request body is larger than ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, "PAYLOAD_TOO_LARGE", `Request body is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJsonBody(text: string, contentType: string | undefined): unknown {
  if (!text) return undefined;
  if (!contentType || !/^application\/(graphql-response\+)?json\b/i.test(contentType)) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "BAD_REQUEST", "Request body is not valid JSON");
  }
  refuseDeepJson(value, "Request body");
  return value;
}

/** A request's JSON nested deeper than anything the schema accepts: refused before anything recurses over it (core/json-depth.ts). */
function refuseDeepJson(value: unknown, what: string): void {
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw new HttpError(400, "BAD_REQUEST", `${what} nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`);
}

/** GET's JSON parameters (variables, extensions), as deep as a body may be; what is not JSON is left to Apollo Server to refuse. */
function refuseDeepSearchParams(params: URLSearchParams): void {
  for (const name of ["variables", "extensions"]) {
    for (const text of params.getAll(name)) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        continue;
      }
      refuseDeepJson(value, `The ${name} parameter`);
    }
  }
}

/**
 * Headers for a public, read-only, credential-free API: any origin may read it (no cookies are
 * ever accepted, so `*` gives nothing away), and browsers are told not to sniff or frame it.
 */
const PUBLIC_API_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "content-type, accept, apollo-require-preflight, x-apollo-operation-name",
  "access-control-expose-headers": "retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset, x-request-id",
  "access-control-max-age": "86400",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-resource-policy": "cross-origin",
};

/** Whether an Accept header asks for HTML (a browser navigating), not merely tolerates it through `*\/*`. */
export function acceptsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(",").some((range) => {
    const [type, ...parameters] = range.trim().toLowerCase().split(";");
    const q = parameters.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return type?.trim() === "text/html" && (q === undefined || Number(q.slice(2)) > 0);
  });
}

export function createGraphQLRequestListener<TContext extends BaseContext>(options: GraphQLHttpOptions<TContext>) {
  const graphqlPath = options.graphqlPath ?? "/graphql";
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const requestId = requestIdOf(req);
    res.setHeader("x-request-id", requestId);
    return serveTraced(req, requestId, async (span) => {
      await runInRequestScope(requestId, () => serve(req, res), options.clientAddressOf?.(req));
      span.setAttribute("http.response.status_code", res.statusCode);
    });
  };

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      for (const [name, value] of Object.entries(PUBLIC_API_HEADERS)) res.setHeader(name, value);
      if (req.method === "OPTIONS") {
        res.writeHead(204).end();
        return;
      }
      if (options.limitInFlight && !(await options.limitInFlight(req, res))) return;
      const url = new URL(req.url ?? "/", "http://localhost");
      const route = options.routes?.[url.pathname];
      if (route) {
        if (options.admitRoute && !(await options.admitRoute(req, res))) return;
        return await route(req, res);
      }
      // Pattern routes (the CSV export) price their own work.
      const patternRoute = options.patternRoutes?.find((r) => r.pattern.test(url.pathname));
      if (patternRoute) return await patternRoute.handler(req, res);
      if (url.pathname !== graphqlPath) {
        if (options.admitRoute && !(await options.admitRoute(req, res))) return;
        throw new HttpError(404, "NOT_FOUND", `No route for ${url.pathname}`);
      }
      const graphqlParams = url.searchParams.has("query") || url.searchParams.has("extensions"); // a persisted query may come by hash alone
      if (options.browserPage && (req.method === "GET" || req.method === "HEAD") && !graphqlParams) {
        // The same URL answers HTML or GraphQL by Accept: caches must keep them apart.
        res.setHeader("vary", "accept");
        if (acceptsHtml(req.headers.accept)) return await options.browserPage(req, res);
      }
      if (options.admit && !(await options.admit(req, res))) return;

      const headers = new HeaderMap();
      for (const [key, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(", ") : value);
      }
      // The answer's media type is decided here, before anything runs (core/accept.ts), and Apollo Server is told it.
      const answerType = graphqlAnswerType(req.headers.accept);
      if (!answerType) throw new HttpError(406, "BAD_REQUEST", `The Accept header allows neither ${GRAPHQL_ANSWER_TYPES.join(" nor ")}`);
      headers.set("accept", answerType);
      const method = (req.method ?? "GET").toUpperCase();
      if (method !== "POST") refuseDeepSearchParams(url.searchParams);
      const body = method === "POST" ? parseJsonBody(await readBody(req, options.maxBodyBytes), req.headers["content-type"]) : undefined;
      const httpGraphQLRequest: HTTPGraphQLRequest = { method, headers, search: url.search, body };
      // Seated only now: a client trickling its body holds no seat while it does.
      if (options.takeSeat && !(await options.takeSeat(req, res))) return;
      const shortcut = options.beforeGraphQL;
      const early = await shortcut?.answer(httpGraphQLRequest, req);
      if (early) {
        const sent = await writeAnswer(req, res, early);
        shortcut?.answered?.(httpGraphQLRequest, early, sent, "before");
        return;
      }
      const response = await options.server.executeHTTPGraphQLRequest({ httpGraphQLRequest, context: () => options.context(req) });
      if (response.body.kind === "complete") {
        const body = response.body.string;
        const bytes = renderedBytesOf(body);
        const answer: CompleteAnswer = { status: response.status ?? 200, headers: response.headers, body, ...(bytes ? { bytes } : {}) };
        const sent = await writeAnswer(req, res, answer); // written whether or not a shortcut is watching
        shortcut?.answered?.(httpGraphQLRequest, answer, sent, "graphql");
        return;
      }
      for (const [key, value] of response.headers) res.setHeader(key, value);
      res.statusCode = response.status ?? 200;
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      try {
        sendError(res, error instanceof HttpError ? error : new HttpError(500, ErrorCode.Internal, "Internal server error"));
      } catch {
        // The head itself cannot be written (a route left a header Node refuses): close the
        // connection rather than leave the client waiting for an answer that cannot come.
        res.destroy();
      }
    } finally {
      // Built and ended: the seat goes back now, though a slow reader's earlier pipelined answer delays `prefinish`.
      options.leaveSeat?.(res);
    }
  }

  /** Writes a complete answer, compressed when the client accepts it (stored bytes first); says what was sent. */
  async function writeAnswer(req: IncomingMessage, res: ServerResponse, answer: CompleteAnswer): Promise<SentEncoding> {
    for (const [key, value] of answer.headers) res.setHeader(key, value);
    res.statusCode = answer.status;
    const body = answer.bytes ?? answer.body;
    if (!options.compression) {
      res.end(body);
      return undefined;
    }
    const vary = res.getHeader("vary");
    res.setHeader("vary", vary ? `${String(vary)}, accept-encoding` : "accept-encoding");
    const encoding = encodingFor(req, body, options.compression);
    if (!encoding) {
      res.end(body);
      return undefined;
    }
    const bytes = answer.encoded?.(encoding) ?? (await compress(body, encoding, options.compression));
    res.setHeader("content-encoding", encoding);
    res.setHeader("content-length", bytes.length);
    res.end(bytes);
    return { encoding, bytes };
  }
}

export interface RunningHttpServer {
  server: http.Server;
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then cuts what is left. */
  close(graceMs?: number): Promise<void>;
}

export interface ListenOptions {
  /**
   * A connection whose pending answer bytes do not move for this long is cut off (a client that
   * stopped reading; core/write-deadline.ts). Default DEFAULT_WRITE_DEADLINE_MS; 0: never.
   */
  writeDeadlineMs?: number;
  /** Where `http_slow_reader_disconnects_total` counts the cuts (the service's /metrics); uncounted when absent. */
  registry?: Registry;
}

/**
 * Connections the kernel may hold completed for a server before it accepts them (Linux caps it at
 * `net.core.somaxconn`, 4096 by default since 5.4). Node's default, 511, is too few for a proxy:
 * when a crowd arrives, nginx opens a new upstream connection for each request beyond its idle
 * keep-alive ones, and while the event loop is busy they queue here; past the queue the kernel drops
 * their SYNs and each of those requests waits a SYN retransmission (1 s, then 3 s, 7 s …) before it
 * is even read (bench/abuse.ts: 3 048 dropped in 20 s, honest p99 up to 10.9 s). A connection
 * waiting in the queue costs only kernel memory; the bounds on work are the points budget and the
 * door (gateway/in-flight.ts).
 */
export const LISTEN_BACKLOG = 4096;

/**
 * Listening sockets per server, all on its one port (SO_REUSEPORT). Node (libuv ≥ 1.45) accepts one
 * connection per listening socket per turn of its event loop, and under load a turn takes tens of
 * milliseconds or more: in bench/abuse.ts nginx opened hundreds of new connections to the gateway as
 * the attackers started (one per request beyond its idle keep-alive ones), the gateway accepted a
 * few dozen a second, and honest requests riding new connections waited seconds in the accept queue
 * before the gateway read them. The kernel spreads new connections over the sockets, so each turn
 * accepts up to this many. SO_REUSEPORT alone would let a second copy of the service on the same
 * port share its connections instead of failing to bind: listenOn binds the port alone first.
 */
export const LISTEN_SOCKETS = 4;

/** `reusePort` came with Node 22.12 / 23.1 (package.json asks for 22.15); older Node listens once. */
export const reusePortSupported = (() => {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
})();

/** Binds host:port (0: a free one) without SO_REUSEPORT and closes it again: the port, or EADDRINUSE when something serves it. */
async function bindAlone(host: string, port: number): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen({ port, host, exclusive: true }, () => resolve());
  });
  const free = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return free;
}

/**
 * Binds `server` to host:port (0: a free one) with LISTEN_BACKLOG, on `sockets` listening sockets
 * (LISTEN_SOCKETS; one where SO_REUSEPORT is not available): the server's own, and more that hand
 * each connection they accept to it (its `connection` event, as its own would). Resolves once all
 * are bound, with the port and a function that closes the extra ones (server.close() closes its own).
 * That function resolves once every connection the extra sockets accepted has closed: server.close()
 * counts only its own socket's, and resolved while theirs still had requests in flight.
 */
export async function listenOn(
  server: http.Server,
  host: string,
  port: number,
  sockets = LISTEN_SOCKETS,
): Promise<{ port: number; closeExtra(): Promise<void> }> {
  const count = reusePortSupported ? sockets : 1;
  const reuse = count > 1 ? { reusePort: true } : {};
  const bind = (target: net.Server, at: number) =>
    new Promise<void>((resolve, reject) => {
      target.once("error", reject);
      target.listen({ port: at, host, backlog: LISTEN_BACKLOG, ...reuse }, () => resolve());
    });
  // With SO_REUSEPORT a second copy of the service started on the same port (an old one left
  // running, a typo in PORT) would share its connections instead of failing: the port is first
  // bound alone, as by any server, so that it fails with EADDRINUSE, and given back at once.
  const at = count > 1 ? await bindAlone(host, port) : port;
  await bind(server, at);
  const bound = (server.address() as AddressInfo).port;
  const extra: net.Server[] = [];
  for (let i = 1; i < count; i++) {
    const more = net.createServer((socket) => server.emit("connection", socket));
    await bind(more, bound);
    extra.push(more);
  }
  return {
    port: bound,
    closeExtra: async () => {
      await Promise.all(extra.map((more) => new Promise((resolve) => more.close(resolve))));
    },
  };
}

/** Node's HTTP parser's refusals, by its error code: a status, our code, and what to change. */
function refusalOf(code: string | undefined): [number, string, string] {
  if (code === "HPE_HEADER_OVERFLOW")
    return [
      431,
      "REQUEST_HEADERS_TOO_LARGE",
      `The request's headers and URL are larger than ${http.maxHeaderSize} bytes: send a shorter URL (POST a long query) or fewer headers`,
    ];
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return [408, "REQUEST_TIMEOUT", "The request was not sent in time"];
  return [400, "BAD_REQUEST", "The request is not well-formed HTTP/1.1"];
}

/**
 * Requests Node's HTTP parser refuses before any listener sees them (headers past its bound, a
 * malformed request line, a request too slow to arrive) are answered in the API's error shape, with
 * CORS, where Node writes a bare status line a browser client cannot read.
 */
export function answerRefusedRequests(server: http.Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: net.Socket) => {
    // Node's own rule: answer only a connection that has been sent nothing yet (never in the middle
    // of, or after, another answer on a kept-alive connection), then end it.
    if (error.code !== "ECONNRESET" && socket.writable && socket.bytesWritten === 0) {
      const [status, code, message] = refusalOf(error.code);
      // A HEAD's answer has no body (the request line is in the packet that failed, when it fits one).
      const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString("latin1") === "HEAD ";
      const body = head ? "" : JSON.stringify({ errors: [{ message, extensions: { code } }] });
      socket.write(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\n` +
          `${head ? "" : `content-length: ${Buffer.byteLength(body)}\r\n`}access-control-allow-origin: *\r\n\r\n${body}`,
      );
    }
    socket.destroySoon();
  });
}

/** Listens on host:port (port 0 picks a free one; listenOn: LISTEN_SOCKETS sockets, LISTEN_BACKLOG each) and resolves once bound. */
export async function listen(listener: http.RequestListener, host: string, port: number, options: ListenOptions = {}): Promise<RunningHttpServer> {
  // Keep-alive outlives a typical load balancer idle timeout (60 s); slow clients get 30 s for a whole request.
  let closing = false;
  const inFlight = new Set<ServerResponse>();
  const server = http.createServer({ keepAliveTimeout: 65_000, headersTimeout: 20_000, requestTimeout: 30_000 }, (req, res) => {
    // While draining, every answer ends its connection so clients move to another replica.
    if (closing) res.setHeader("connection", "close");
    inFlight.add(res);
    res.once("close", () => inFlight.delete(res));
    return listener(req, res);
  });
  answerRefusedRequests(server);
  const connections = trackConnections(server);
  const slowReaders = options.registry ? slowReaderCounter(options.registry) : undefined;
  const stopDeadline = enforceWriteDeadline(server, {
    deadlineMs: options.writeDeadlineMs ?? DEFAULT_WRITE_DEADLINE_MS,
    onCut: () => slowReaders?.inc(),
  });
  server.once("close", stopDeadline);
  const bound = await listenOn(server, host, port);
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    server,
    port: bound.port,
    url: `http://${shownHost}:${bound.port}`,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
        const extraClosed = bound.closeExtra();
        // Closed once the server's own connections and the extra sockets' have all ended.
        server.close(() => void extraClosed.then(() => resolve()));
        // Idle keep-alive sockets go now; busy ones finish their request, answered with
        // `Connection: close`.
        server.closeIdleConnections();
        setTimeout(() => {
          server.closeAllConnections();
          connections.destroyAll();
        }, graceMs).unref();
      }),
  };
}
