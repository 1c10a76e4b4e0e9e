// The clients of bench/abuse.ts and its attacker children, each bound to its own loopback address
// (127.0.0.x, `localAddress`): the servers run with TRUST_PROXY_HOPS=0, so the peer address is the
// client the points budget and realtime admission count. HTTP exchanges that read the answer, never
// read it, or read it slowly; an open-loop pacer; and a bare Socket.IO client over `ws` (Engine.IO 4
// / Socket.IO 5 framing) that can stop reading, which socket.io-client cannot.
import http from "node:http";
import WebSocket from "ws";

export const REQUEST_TIMEOUT_MS = 15_000;

export interface Exchange {
  /** 0: no response (socket error or timeout). */
  status: number;
  text: string;
  ms: number;
  sentAt: number;
  doneAt: number;
  /** The answer's body ended before its end (the server cut it, or a socket error). */
  cut: boolean;
  error?: string;
  /** The answer's `RateLimit-Remaining` (points left in the client's budget) and `Retry-After` (seconds), when it had them. */
  rateLimitRemaining?: number;
  retryAfterSeconds?: number;
}

/** How the client reads the answer: all of it; nothing (holds the response open `holdMs`); or `slowBytesPerSecond`. */
export type ReadMode = { kind: "all" } | { kind: "never"; holdMs: number } | { kind: "slow"; holdMs: number };

export interface RequestSpec {
  url: URL;
  method: "GET" | "POST";
  body?: Buffer;
  localAddress: string;
  agent?: http.Agent;
  read?: ReadMode;
  timeoutMs?: number;
  /** Extra request headers (the honest clients' X-Request-Id, to find each request in nginx's access log). */
  headers?: Record<string, string>;
}

/**
 * One HTTP exchange from `localAddress`. A refusal (non-2xx) is always read in full, so its error
 * code is known; a 2xx answer is read as `read` says. `cut` tells a server that ended the answer
 * early (a write deadline) from one the client dropped when its `holdMs` was over.
 */
export function exchange(spec: RequestSpec): Promise<Exchange> {
  const sentAt = performance.now();
  const read = spec.read ?? { kind: "all" };
  return new Promise((resolve) => {
    let settled = false;
    let budget: Pick<Exchange, "rateLimitRemaining" | "retryAfterSeconds"> = {};
    const finish = (status: number, text: string, cut: boolean, error?: string) => {
      if (settled) return;
      settled = true;
      const doneAt = performance.now();
      resolve({ status, text, ms: doneAt - sentAt, sentAt, doneAt, cut, error, ...budget });
    };
    const headers: http.OutgoingHttpHeaders = {
      ...spec.headers,
      ...(spec.body ? { "content-type": "application/json", "content-length": spec.body.length } : {}),
    };
    const req = http.request(
      {
        host: spec.url.hostname,
        port: spec.url.port,
        path: `${spec.url.pathname}${spec.url.search}`,
        method: spec.method,
        localAddress: spec.localAddress,
        agent: spec.agent ?? false,
        headers,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const header = (name: string) => (typeof res.headers[name] === "string" ? Number(res.headers[name]) : undefined);
        budget = { rateLimitRemaining: header("ratelimit-remaining"), retryAfterSeconds: header("retry-after") };
        const chunks: Buffer[] = [];
        if (read.kind === "all" || status < 200 || status >= 300) {
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => finish(status, Buffer.concat(chunks).toString("utf8"), false));
          res.on("aborted", () => finish(status, Buffer.concat(chunks).toString("utf8"), true, "aborted"));
          res.on("error", (error) => finish(status, "", true, error.message));
          return;
        }
        // A reader that stops: the kernel's buffers fill, then the server's writes wait on us.
        let ended = false;
        res.once("end", () => {
          ended = true;
          finish(status, "", false);
        });
        res.once("aborted", () => finish(status, "", true, "cut by the server"));
        res.once("close", () => {
          if (!ended) finish(status, "", true, "cut by the server");
        });
        if (read.kind === "never") {
          res.pause();
        } else {
          // One small read a second: alive, but far slower than any answer is written.
          res.pause();
          const drip = setInterval(() => res.read(64), 1000);
          res.once("close", () => clearInterval(drip));
        }
        setTimeout(() => {
          if (settled) return;
          finish(status, "", false, "dropped by the client");
          req.destroy();
        }, read.holdMs).unref();
      },
    );
    req.setTimeout(spec.timeoutMs ?? REQUEST_TIMEOUT_MS, () => req.destroy(new Error("timeout")));
    req.on("error", (error) => finish(0, "", true, error.message));
    req.end(spec.body);
  });
}

export interface GraphQLAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } & Record<string, unknown> }[];
  extensions?: { cost?: { requested: number; actual: number } };
}

export function parseAnswer(text: string): GraphQLAnswer | undefined {
  try {
    return JSON.parse(text) as GraphQLAnswer;
  } catch {
    return undefined;
  }
}

/** "200 data", "429 RATE_LIMITED", "429 RATE_LIMITED (in flight)", "503 SERVICE_BUSY", "0 timeout" …; `refused`: not a 2xx answer with data and no errors. */
export function outcomeOf(e: Exchange): { key: string; code: string | undefined; refused: boolean } {
  if (e.status === 0) return { key: `no response (${e.error ?? "?"})`, code: undefined, refused: false };
  const ok = e.status >= 200 && e.status < 300;
  if (ok && e.text === "") return { key: `${e.status} ${e.cut ? "cut" : "held"}`, code: undefined, refused: false };
  const answer = parseAnswer(e.text);
  const code = answer?.errors?.[0]?.extensions?.code;
  if (ok && !code) return { key: `${e.status} ${e.cut ? "cut" : "data"}`, code: undefined, refused: false };
  // The two RATE_LIMITED causes told apart in the tallies: the points budget, or the cap on requests in flight.
  const inFlight = code === "RATE_LIMITED" && answer?.errors?.[0]?.message.includes("in flight") ? " (in flight)" : "";
  return { key: `${e.status} ${code ?? "no code"}${inFlight}`, code: code ?? `HTTP ${e.status}`, refused: true };
}

/**
 * Calls `fire(i)` at start + i/rate (open loop: a slow answer never delays the next request) until
 * `until()` says stop. Resolves when it stops.
 */
export function pace(rate: number, fire: (i: number) => void, stop: () => boolean): Promise<void> {
  if (rate <= 0) return Promise.resolve();
  const interval = 1000 / rate;
  const start = performance.now();
  let i = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (!stop() && start + i * interval <= now) fire(i++);
      if (stop()) return resolve();
      setTimeout(tick, Math.max(0, start + i * interval - performance.now()));
    };
    tick();
  });
}

/**
 * `workers` loops, each sending `fire(i)` as soon as its previous answer came (closed loop: as
 * fast as the server answers), and after a refusal waiting the `Retry-After` it was given (as fast
 * as its limits allow: a client that honours the hint gets the most the budget lets through).
 * Resolves when every loop has seen `stop()`.
 */
export function closedLoop(workers: number, fire: (i: number) => Promise<{ retryAfterSeconds?: number }>, stop: () => boolean): Promise<void> {
  let i = 0;
  const loop = async () => {
    while (!stop()) {
      const { retryAfterSeconds } = await fire(i++);
      if (retryAfterSeconds !== undefined && retryAfterSeconds > 0 && !stop()) await new Promise((resolve) => setTimeout(resolve, retryAfterSeconds * 1000));
    }
  };
  return Promise.all(Array.from({ length: workers }, loop)).then(() => undefined);
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

// ---------------------------------------------------------------------------------------------
// A bare Socket.IO client over ws
// ---------------------------------------------------------------------------------------------

export type RawOutcome = { admitted: true } | { admitted: false; code: string };

/**
 * One Socket.IO connection over a bare WebSocket from `localAddress`: resolves `ready` with the
 * handshake's outcome (admitted, or the CONNECT_ERROR's code). `emitWithAck` sends an event and
 * resolves with its acknowledgement; `stopReading` pauses the socket (the server's writes then
 * pile up on its side); `updates` counts the `bets:update` frames read, `firstUpdate` resolves at
 * the first. `closed` is true from `close()` on (a reconnect loop frees its slot at once).
 */
export class RawSocketIo {
  readonly ready: Promise<RawOutcome>;
  updates = 0;
  closed = false;
  private readonly ws: WebSocket;
  private nextAck = 0;
  private readonly acks = new Map<number, (payload: unknown) => void>();
  private onUpdate: (() => void) | undefined;
  /** Resolves when the first `bets:update` frame is read. */
  readonly firstUpdate = new Promise<void>((resolve) => (this.onUpdate = resolve));

  constructor(base: string, path: string, localAddress: string) {
    this.ws = new WebSocket(`${base.replace(/^http/, "ws")}${path}/?EIO=4&transport=websocket`, { localAddress, perMessageDeflate: false });
    this.ready = new Promise((resolve) => {
      this.ws.on("message", (data: Buffer) => {
        const text = data.toString("utf8");
        if (text === "2") this.ws.send("3");
        else if (text.startsWith("0")) this.ws.send("40");
        else if (text.startsWith("40")) resolve({ admitted: true });
        else if (text.startsWith("44")) {
          const parsed = JSON.parse(text.slice(2)) as { data?: { code?: string } };
          resolve({ admitted: false, code: parsed.data?.code ?? "CONNECT_ERROR" });
        } else if (text.startsWith('42["bets:update"')) {
          this.updates++;
          this.onUpdate?.();
        } else if (text.startsWith("43")) {
          const match = /^43(\d+)(.*)$/s.exec(text);
          if (match) {
            const ack = this.acks.get(Number(match[1]));
            this.acks.delete(Number(match[1]));
            ack?.((JSON.parse(match[2]!) as unknown[])[0]);
          }
        }
      });
      // Refused before the Socket.IO handshake (engine.io's allowRequest): an HTTP answer to the upgrade.
      this.ws.on("unexpected-response", (_req, res) => {
        const status = `HTTP ${res.statusCode}`;
        const fallback = setTimeout(() => resolve({ admitted: false, code: status }), 500);
        res.once("data", (chunk: Buffer) => {
          clearTimeout(fallback);
          let detail = "";
          try {
            // The backstop's 429 carries the refusal itself: { code, message, retryAfterSeconds }.
            const parsed = JSON.parse(chunk.toString("utf8")) as { code?: unknown; message?: unknown; data?: { code?: string } };
            detail = String(parsed.data?.code ?? parsed.code ?? parsed.message ?? "");
          } catch {
            // not JSON: the status alone
          }
          resolve({ admitted: false, code: `${status} ${detail}`.trim() });
        });
      });
      this.ws.on("error", (error) => resolve({ admitted: false, code: `socket error (${error.message.slice(0, 60)})` }));
      this.ws.on("close", () => {
        this.closed = true;
        resolve({ admitted: false, code: "closed" });
        for (const ack of this.acks.values()) ack({ error: { code: "closed" } });
        this.acks.clear();
      });
    });
  }

  emitWithAck(event: string, payload: unknown, timeoutMs = 10_000): Promise<unknown> {
    const id = this.nextAck++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.acks.delete(id);
        resolve({ error: { code: "ack timeout" } });
      }, timeoutMs);
      this.acks.set(id, (value) => {
        clearTimeout(timer);
        resolve(value);
      });
      this.ws.send(`42${id}${JSON.stringify([event, payload])}`);
    });
  }

  stopReading(): void {
    this.ws.pause();
  }

  close(): void {
    this.closed = true;
    this.ws.terminate();
  }
}

/** The error code of a `bets:subscribe` acknowledgement, or undefined when it subscribed. */
export function ackError(ack: unknown): string | undefined {
  if (ack && typeof ack === "object" && "error" in ack) return String((ack as { error: { code?: string } }).error.code ?? "error");
  return undefined;
}
