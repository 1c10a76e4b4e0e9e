// The floors of the peer gateway benchmark (bench/gateways.ts): one Node process that answers the
// benchmark's two gateway queries with no GraphQL at all, in one of two ways:
//
//   raw    bench/floor-raw.ts: `pg` alone, the fewest statements a hand-written service would send
//          (one per query), rows shaped into the answer's JSON by hand. The floor of the ratios.
//   data   bench/floor-data.ts: through the owning subgraphs' own data functions (Prisma, the
//          statements the subgraphs send). What lies between it and raw is the data layer's cost.
//
//   BENCH_SERVE_DATABASE_URL=... npx tsx bench/floor.ts raw|data   → prints { pid, role: "floor-raw"|"floor", url }
//
// Both write JSON bytes that bench/gateways.ts checks against the service's answer before any load.
// Apollo Server ends every JSON body with a newline; so do these. They know exactly two operations,
// told apart by their name (BenchBetResults, BenchPlayerBets) and read from the variables; anything
// else is answered 400. Stops on SIGTERM/SIGINT.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { stopOnSignals } from "../bin/wiring.ts";
import { benchConfig } from "./common.ts";
import { reportLoopStatsOnSignal } from "./loop-stats.ts";

export interface FloorAnswer {
  body: string;
  /** Cache-Control max-age, when the floor works it out as the service does. */
  maxAge?: number;
}

export type FloorOperation = (variables: Record<string, unknown>) => Promise<FloorAnswer>;

export interface Floor {
  operations: Record<"BenchBetResults" | "BenchPlayerBets", FloorOperation>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function serve(floor: Floor, role: string, logger: pino.Logger): Promise<void> {
  const operations: Record<string, FloorOperation> = floor.operations;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const request = JSON.parse(await readBody(req)) as { query?: string; variables?: Record<string, unknown> };
    const name = /^\s*query\s+(\w+)/.exec(request.query ?? "")?.[1];
    const operation = name ? operations[name] : undefined;
    if (!operation) {
      res.writeHead(400, { "content-type": "application/json" }).end('{"errors":[{"message":"the floor knows two operations"}]}');
      return;
    }
    const answer = await operation(request.variables ?? {});
    res
      .writeHead(200, {
        "content-type": "application/graphql-response+json; charset=utf-8",
        "content-length": Buffer.byteLength(answer.body),
        ...(answer.maxAge === undefined ? {} : { "cache-control": `max-age=${answer.maxAge}, public` }),
      })
      .end(answer.body);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error }, "floor request failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end('{"errors":[{"message":"internal"}]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.stdout.write(`${JSON.stringify({ pid: process.pid, role, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql` })}\n`);
  stopOnSignals(logger, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await floor.close();
  });
}

// Run as a script (not when imported for the types above).
if (import.meta.url === `file://${process.argv[1]}`) {
  const mode = process.argv[2] ?? "data";
  const logger = pino({ name: `bench-floor-${mode}`, level: benchConfig.BENCH_LOG_LEVEL ?? "warn" }, pino.destination(2));
  const url = benchConfig.BENCH_SERVE_DATABASE_URL;
  if (!url || (mode !== "raw" && mode !== "data")) {
    process.stderr.write("usage: BENCH_SERVE_DATABASE_URL=... bench/floor.ts raw|data\n");
    process.exit(2);
  }
  reportLoopStatsOnSignal(mode === "raw" ? "floor-raw" : "floor");
  const floor = mode === "raw" ? await (await import("./floor-raw.ts")).openRawFloor(url) : await (await import("./floor-data.ts")).openDataFloor(url, logger);
  await serve(floor, mode === "raw" ? "floor-raw" : "floor", logger);
}
