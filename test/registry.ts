import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { composeServices } from "@apollo/composition";
import { readFileSync } from "node:fs";
import { createLogger, type Logger } from "../core/logger.ts";
import { parseSdl } from "../core/schema.ts";
import { COMPOSED_SERVICES } from "../scripts/supergraph.ts";

/**
 * A schema registry's CDN endpoint on loopback, as a gateway follows one (SUPERGRAPH_URL): it serves
 * what `publish` gave it with an ETag, answers 304 to a matching If-None-Match, and can be taken
 * down (HTTP 503) or stopped. It counts the polls it answered, so a test can wait for "the next
 * poll" instead of for a length of time.
 */
export interface TestRegistry {
  url: string;
  publish(supergraphSdl: string): void;
  /** `down`: every request answers 503 until `up()`. */
  down(): void;
  up(): void;
  /** Requests answered so far, and the headers of the last. */
  polls(): number;
  lastHeaders(): IncomingHttpHeaders | undefined;
  statuses(): number[];
  close(): Promise<void>;
}

export async function startTestRegistry(initial?: string): Promise<TestRegistry> {
  let body = initial;
  let unavailable = false;
  let answered = 0;
  let headers: IncomingHttpHeaders | undefined;
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    headers = req.headers;
    const etag = body === undefined ? undefined : `"${createHash("sha256").update(body).digest("hex")}"`;
    const status = unavailable || body === undefined ? 503 : req.headers["if-none-match"] === etag ? 304 : 200;
    statuses.push(status);
    res.on("finish", () => answered++);
    if (status !== 200) {
      res.writeHead(status);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", etag: etag! });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/artifacts/v1/supergraph`,
    publish: (sdl) => {
      body = sdl;
    },
    down: () => {
      unavailable = true;
    },
    up: () => {
      unavailable = false;
    },
    polls: () => answered,
    lastHeaders: () => headers,
    statuses: () => [...statuses],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A supergraph of the committed subgraph SDL files, with `replace` (SDL text by subgraph name) and without the `omit` subgraphs. */
export function composeWith(options: { replace?: Record<string, string>; omit?: readonly string[] } = {}): string {
  const services = COMPOSED_SERVICES.filter(({ name }) => !options.omit?.includes(name)).map(({ name, sdl, url }) => ({
    name,
    url,
    typeDefs: parseSdl(options.replace?.[name] ?? readFileSync(sdl, "utf8"), sdl),
  }));
  const result = composeServices(services);
  if (result.errors) throw new Error(result.errors.map((e) => e.message).join("\n"));
  return result.supergraphSdl;
}

/** A JSON-lines logger whose lines a test can read (and print into a report). */
export function capturingLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: "info", name: "test", destination }), lines: () => [...lines] };
}

/** History's SDL with `pendingBetCount` taken out (its description, arguments and directives): a good new version. */
export function historyWithoutPendingBetCount(): string {
  const history = readFileSync("subgraphs/history/history.graphql", "utf8");
  return history.replace(/\n {2}"How many of the wallet's bets are PENDING[^\n]*\n {2}pendingBetCount\([\s\S]*?\n {2}\): Int![^\n]*\n/, "\n");
}
