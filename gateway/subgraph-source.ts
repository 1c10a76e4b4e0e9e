import { isUtf8 } from "node:buffer";
import { randomBytes } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from "@apollo/gateway";
import { GraphQLError } from "graphql";
import type { Histogram } from "prom-client";
import { Agent, type Dispatcher } from "undici";
import { ServiceUnavailableError } from "../core/errors.ts";
import type { InProcessAnswer, InProcessRequest } from "../core/schema.ts";
import { CLIENT_ADDRESS_HEADER, currentRequestScope, READ_PIN_HEADER, READ_PINS_HONOURED_HEADER } from "../core/request-scope.ts";
import { callTraced } from "../core/tracing.ts";
import { objectKeysOf } from "./actual-cost.ts";
import { isAnsweredWhole, keepDataBytes, parseJson, readWithoutData } from "./forwarded-data.ts";
import { copyJson } from "./json-copy.ts";
import { addMinBlockHeader, recordReadAt } from "./read-at.ts";

// The gateway → subgraph HTTP client. @apollo/gateway's RemoteGraphQLDataSource builds a node-fetch
// Request and Headers for every subgraph call and goes through a WHATWG fetch: profiled under load,
// that client was the largest share of the gateway's CPU. This data source does the same job with
// undici's request API over keep-alive connections (one pool per subgraph origin, shared by the
// gateway): the same body, the same Cache-Control merging, the same error rules. Like Hive Gateway
// by default, identical queries in flight to a subgraph share one request.

/** Keep-alive connections to the subgraphs; one per gateway, closed when it stops. */
export function createSubgraphAgent(): Agent {
  // Idle connections stay open below the subgraphs' own keep-alive timeout (65 s, core/http.ts).
  return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
}

const JSON_TYPE = /^application\/(graphql-response\+)?json/;

type CacheHint = Readonly<{ maxAge: number; scope?: "PUBLIC" | "PRIVATE" }>;

/** Hints by header value: subgraphs answer a handful of distinct `Cache-Control` values, each read once. */
const cacheHints = new Map<string, CacheHint>();
const CACHE_HINTS_KEPT = 256;

/** `Cache-Control` → the hint Apollo's cache control plugin merges (what RemoteGraphQLDataSource does). */
function cacheHintOf(header: string | string[] | undefined): CacheHint {
  const value = Array.isArray(header) ? header.join(",") : header;
  if (!value) return { maxAge: 0 };
  let hint = cacheHints.get(value);
  if (!hint) {
    if (cacheHints.size >= CACHE_HINTS_KEPT) cacheHints.clear();
    hint = Object.freeze(parseCacheControl(value));
    cacheHints.set(value, hint);
  }
  return hint;
}

function parseCacheControl(value: string): { maxAge: number; scope?: "PUBLIC" | "PRIVATE" } {
  const hint: { maxAge: number; scope?: "PUBLIC" | "PRIVATE" } = { maxAge: 0 };
  for (const part of value.trim().split(/\s*,\s*/)) {
    const [key, raw] = part.split(/\s*=\s*/, 2);
    if (key === "max-age" && raw && /^"?[0-9]+"?$/.test(raw)) hint.maxAge = Number(raw.replace(/"/g, ""));
    else if (key === "private") hint.scope = "PRIVATE";
    else if (key === "public") hint.scope = "PUBLIC";
  }
  return hint;
}

type GatewayGraphQLResponse = Awaited<ReturnType<GraphQLDataSource["process"]>>;

/** A subgraph that does not answer (refused, reset, stopped): SERVICE_UNAVAILABLE, named, without host or port. */
function unavailable(subgraphName: string): ServiceUnavailableError {
  return new ServiceUnavailableError(`The ${subgraphName} service is unavailable`, { serviceName: subgraphName });
}

/** Merges a subgraph's Cache-Control into the gateway request's cache policy (what RemoteGraphQLDataSource does). */
function restrictCachePolicy(options: GraphQLDataSourceProcessOptions, cacheControl: string | string[] | undefined): void {
  if (!("incomingRequestContext" in options)) return;
  const policy = options.incomingRequestContext.overallCachePolicy;
  if (policy && "restrict" in policy) policy.restrict(cacheHintOf(cacheControl));
}

/**
 * A subgraph answers a request it refuses (validation, variable coercion) with HTTP 400 and a
 * GraphQL body: an ordinary GraphQL response whose errors (BAD_USER_INPUT, …) the client must see.
 * Any other status outside 2xx is an error naming it.
 */
function checkStatus(status: number, parsed: unknown, url: string, body: unknown): void {
  const graphqlRefusal = status >= 400 && status < 500 && isObject(parsed) && "errors" in parsed;
  if ((status >= 200 && status < 300) || graphqlRefusal) return;
  const statusText = STATUS_CODES[status] ?? "";
  throw new GraphQLError(`${status}: ${statusText}`, { extensions: { response: { url, status, statusText, body } } });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One HTTP exchange with a subgraph, before it is read as GraphQL (so that waiters can share it). */
interface Exchange {
  status: number;
  type: string;
  text: string;
  /** The body's bytes when `text` is exactly their UTF-8 (gateway/forwarded-data.ts writes them as they came). */
  bytes?: Buffer;
  cacheControl?: string | string[];
  /** Whether the subgraph said it reads by pin (READ_PINS_HONOURED_HEADER). */
  pinsHonoured: boolean;
}

// Read pins. Every subgraph call of one incoming request carries the same token (READ_PIN_HEADER),
// and the subgraphs map one token to one database server (core/read-replicas.ts), so a request
// never combines, say, a bet's status read on one replica with its result read on another. The
// token names the request, not a server: this process knows nothing of databases. It is fixed at
// the request's first subgraph call; when that call joins an identical query already in flight,
// the request takes that query's pin (what it was answered from is where the rest of it reads).
const PIN_PREFIX = randomBytes(6).toString("base64url");
let pinCount = 0;
const newPin = () => `${PIN_PREFIX}.${(pinCount++).toString(36)}`;

/**
 * Adds the request id and the read pin of the gateway request being served to a subgraph call's
 * headers; the pin is fixed at the request's first call (`joining`: the pin of an identical call
 * in flight, which this one would share). Synchronous, so calls of one request made in parallel agree.
 */
function withRequestScope(headers: Record<string, string>, joining?: string) {
  const scope = currentRequestScope();
  if (scope) {
    // One request id from the client's request through every subgraph it reaches.
    headers["x-request-id"] = scope.requestId;
    scope.readPin ??= joining || newPin();
    headers[READ_PIN_HEADER] = scope.readPin;
    // Who asks, by the gateway's trusted-proxy rule: the subgraphs' per-client shares. Not in the
    // key of shared calls: an identical call in flight is shared whoever asks (it runs once).
    if (scope.clientAddress !== undefined) headers[CLIENT_ADDRESS_HEADER] = scope.clientAddress;
  }
  return scope;
}

/**
 * Identical calls in flight to one subgraph, shared (nothing is kept afterwards): by call (its
 * headers without request id, and its body), then by read pin ("" for calls outside a gateway
 * request). Mutations are never shared. A request whose pin is not fixed yet takes the pin of the
 * call it would join (withRequestScope); one already pinned joins only calls of its own pin,
 * unless the subgraph reads everything from one server (`pinsHonoured` false: it said so on its
 * last served answer, READ_PINS_HONOURED_HEADER; until it answers, assumed to read by pin).
 */
class InFlightCalls<T extends { status: number; pinsHonoured: boolean }> {
  private readonly calls = new Map<string, Map<string, { answer: Promise<T>; joiners: number }>>();
  private pinsHonoured = true;

  /** The key of a call that may be shared; undefined for a mutation or subscription. */
  keyOf(query: string, headers: Record<string, string>, body: string): string | undefined {
    return /^\s*(mutation|subscription)\b/.test(query) ? undefined : `${JSON.stringify(headers)}\n${body}`;
  }

  /** The pin of a call in flight with this key, which a request not pinned yet would join. */
  joinablePin(key: string | undefined): string | undefined {
    return key !== undefined ? this.calls.get(key)?.keys().next().value : undefined;
  }

  /**
   * The call's answer: the one in flight with the same key and pin, else a new one from `send`.
   * `shared`: another caller got the same answer (so whoever changes it must change a copy).
   */
  async run(key: string | undefined, pin: string, send: () => Promise<T>): Promise<{ answer: T; shared: boolean }> {
    if (key === undefined) return { answer: await send(), shared: false };
    const slot = this.pinsHonoured ? pin : "";
    const pins = this.calls.get(key) ?? new Map<string, { answer: Promise<T>; joiners: number }>();
    const pending = pins.get(slot);
    if (pending) {
      pending.joiners++;
      return { answer: await pending.answer, shared: true };
    }
    this.calls.set(key, pins);
    const call = {
      // Forgotten as soon as it settles: no caller joins it after that (the count below is final).
      answer: send().finally(() => {
        pins.delete(slot);
        if (pins.size === 0 && this.calls.get(key) === pins) this.calls.delete(key);
      }),
      joiners: 0,
    };
    pins.set(slot, call);
    const answer = await call.answer;
    // Only a served answer says pins are not honoured (an error page may come from elsewhere).
    if (answer.pinsHonoured || answer.status === 200) this.pinsHonoured = answer.pinsHonoured;
    return { answer, shared: call.joiners > 0 };
  }
}

export class SubgraphDataSource implements GraphQLDataSource {
  private readonly origin: string;
  private readonly path: string;
  /** Identical queries in flight to this subgraph share one request. */
  private readonly inFlight = new InFlightCalls<Exchange>();

  private readonly subgraphName: string;
  private readonly url: string;
  private readonly dispatcher: Dispatcher;
  private readonly fetchDuration: Histogram<"subgraph"> | undefined;
  constructor(subgraphName: string, url: string, dispatcher: Dispatcher, fetchDuration?: Histogram<"subgraph">) {
    this.subgraphName = subgraphName;
    this.url = url;
    this.dispatcher = dispatcher;
    this.fetchDuration = fetchDuration;
    const parsed = new URL(url);
    this.origin = parsed.origin;
    this.path = `${parsed.pathname}${parsed.search}`;
  }

  async process(options: GraphQLDataSourceProcessOptions): Promise<GatewayGraphQLResponse> {
    const { http, ...payload } = options.request;
    if (!payload.query) throw new Error("Missing query");
    const headers: Record<string, string> = {};
    if (http?.headers) for (const [name, value] of http.headers) headers[name] = value;
    headers["content-type"] = "application/json";
    addMinBlockHeader(headers);
    const body = JSON.stringify(payload);
    // Many clients asking the same thing at once (a popular bet, the network list) cost the
    // subgraph one request. The key leaves the request id out: the shared request carries the
    // first asker's id.
    const key = this.inFlight.keyOf(payload.query, headers, body);
    const scope = withRequestScope(headers, this.inFlight.joinablePin(key));
    const { answer: exchange } = await this.inFlight.run(key, scope?.readPin ?? "", () =>
      callTraced(`subgraph ${this.subgraphName}`, { "server.address": this.origin }, headers, (traced) => this.send(body, traced)),
    );
    restrictCachePolicy(options, exchange.cacheControl);
    // An answer that is the gateway's answer as it came: its data is not parsed (gateway/forwarded-data.ts).
    const document = "document" in options ? options.document : undefined;
    const whole = document && isAnsweredWhole(options.request) ? objectKeysOf(document) : undefined;
    // Parsed per asker: the gateway merges into what it receives, so waiters never share objects.
    const answer = this.interpret(exchange, whole);
    recordReadAt(answer);
    return answer;
  }

  private async send(body: string, headers: Record<string, string>): Promise<Exchange> {
    const stop = this.fetchDuration?.startTimer({ subgraph: this.subgraphName });
    try {
      let answer: Dispatcher.ResponseData;
      try {
        answer = await this.dispatcher.request({ origin: this.origin, path: this.path, method: "POST", headers, body });
      } catch {
        throw unavailable(this.subgraphName); // nothing answered: refused, reset, DNS
      }
      const { text, bytes } = decodeBody(await answer.body.bytes());
      return {
        status: answer.statusCode,
        type: String(answer.headers["content-type"] ?? ""),
        text,
        bytes,
        cacheControl: answer.headers["cache-control"],
        pinsHonoured: answer.headers[READ_PINS_HONOURED_HEADER] === "1",
      };
    } finally {
      stop?.();
    }
  }

  /** `whole`: the operation's composite response keys, when its answer without errors is forwarded as it came. */
  private interpret({ status, type, text, bytes }: Exchange, whole?: ReadonlySet<string>): GatewayGraphQLResponse {
    const forwarded = whole && status >= 200 && status < 300 && JSON_TYPE.test(type) ? readWithoutData(text, bytes, whole) : undefined;
    if (forwarded) return forwarded;
    const parsed = JSON_TYPE.test(type) ? parseJson(text) : undefined;
    checkStatus(status, parsed, this.url, parsed ?? text);
    if (!isObject(parsed)) throw new Error(`Expected JSON response body, but received: ${text.slice(0, 200)}`);
    // Written as they came when this data is the gateway's answer (gateway/forwarded-data.ts).
    keepDataBytes(parsed, text, bytes);
    return parsed as GatewayGraphQLResponse;
  }
}

/**
 * A subgraph running in this process (the `npm start` stack): executed directly, with its own
 * request pipeline (context, plugins, error masking, Cache-Control), but without a socket, an HTTP
 * parse or a JSON round trip. It answers 503 when it is not running (stopped: SERVICE_UNAVAILABLE),
 * and 500 when it fails inside, as over HTTP.
 */
export interface InProcessSubgraph {
  execute(request: InProcessRequest): Promise<InProcessAnswer>;
  /** Whether it reads by read pin (it has replicas); unknown: assumed so. */
  readonly honoursReadPins?: boolean;
}

/**
 * The gateway → subgraph call when both share a process: the same rules as SubgraphDataSource
 * (request id, Cache-Control merged, a subgraph that does not answer is SERVICE_UNAVAILABLE, a
 * refusal's errors reach the client, identical calls in flight shared), minus the transport.
 * Profiled in `npm start`, the loopback HTTP hop (both ends in one event loop) and the JSON
 * stringify and parse of every subgraph answer were the largest share of the process's CPU. A
 * shared answer is copied for each caller: the gateway merges into the objects it receives.
 */
export class InProcessSubgraphSource implements GraphQLDataSource {
  private readonly inFlight = new InFlightCalls<InProcessAnswer & { pinsHonoured: boolean }>();

  private readonly subgraphName: string;
  private readonly subgraph: InProcessSubgraph;
  private readonly fetchDuration: Histogram<"subgraph"> | undefined;
  constructor(subgraphName: string, subgraph: InProcessSubgraph, fetchDuration?: Histogram<"subgraph">) {
    this.subgraphName = subgraphName;
    this.subgraph = subgraph;
    this.fetchDuration = fetchDuration;
  }

  async process(options: GraphQLDataSourceProcessOptions): Promise<GatewayGraphQLResponse> {
    const { http, query, variables, operationName, extensions } = options.request;
    if (!query) throw new Error("Missing query");
    const headers: Record<string, string> = {};
    if (http?.headers) for (const [name, value] of http.headers) headers[name] = value;
    addMinBlockHeader(headers);
    const key = this.inFlight.keyOf(query, headers, JSON.stringify({ query, variables, operationName, extensions }));
    const scope = withRequestScope(headers, this.inFlight.joinablePin(key));
    const { answer, shared } = await this.inFlight.run(key, scope?.readPin ?? "", () => this.execute({ query, variables, operationName, extensions, headers }));
    // Not running (stopped): what a refused connection is over HTTP.
    if (answer.status === 503) throw unavailable(this.subgraphName);
    restrictCachePolicy(options, answer.cacheControl);
    checkStatus(answer.status, answer.body, `in-process:${this.subgraphName}`, answer.body);
    recordReadAt(answer.body);
    return (shared ? copyJson(answer.body) : answer.body) as GatewayGraphQLResponse;
  }

  private async execute(request: InProcessRequest): Promise<InProcessAnswer & { pinsHonoured: boolean }> {
    const stop = this.fetchDuration?.startTimer({ subgraph: this.subgraphName });
    const pinsHonoured = this.subgraph.honoursReadPins ?? true;
    try {
      return { ...(await this.subgraph.execute(request)), pinsHonoured };
    } catch {
      // A failure inside the subgraph, as its HTTP front would answer it: a 500.
      return { status: 500, body: {}, pinsHonoured };
    } finally {
      stop?.();
    }
  }
}

/**
 * A body as undici's `text()` decodes it (UTF-8, a byte order mark skipped), with its bytes when
 * they are valid UTF-8: then the text is exactly their decoding, and a slice of one is a slice of the other.
 */
function decodeBody(body: Uint8Array): { text: string; bytes?: Buffer } {
  const all = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const bytes = all[0] === 0xef && all[1] === 0xbb && all[2] === 0xbf ? all.subarray(3) : all;
  return { text: bytes.toString("utf8"), ...(isUtf8(bytes) ? { bytes } : {}) };
}
