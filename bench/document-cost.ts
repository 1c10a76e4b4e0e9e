// What a GraphQL document the gateway has not seen before costs it in CPU, beside the same text
// sent again (issue 21: the price of a new document, docs/reference/limits.md#rate-limit).
//
//   npx tsx bench/document-cost.ts [--requests 300] [--runs 3]
//
// Loopback only. Creates a PostgreSQL database from the test template on BENCH_DATABASE_URL's
// server (dropped at the end) with the fixtures' networks and 20 bets, starts bench/serve.ts over it in a child process (the production
// gateway and subgraphs, query limits on, no rate limit) and sends each document `--requests`
// times one after another: once the same text every time (Apollo Server's document store and the
// gateway's plan cache answer all but the first), once a new text every time (a comment with a
// counter in front: parse, validation, the query limits and a query plan every request). The
// child's CPU (user + system, /proc) per request is the server's; the difference between the two
// runs is what a new text costs, printed beside its tokens and beside the points the budget
// charges a new document past a client's free tokens (gateway/validation-work.ts newDocumentPoints).
// The last row asks a second child, with the response cache on, for a stored answer: the same text
// is a hit whose key the gateway remembers, a new text a hit whose key meant parsing and printing
// the text again (gateway/cache-key.ts), priced as a new document since issue 21 (10 points before).
import { parseArgs } from "node:util";
import { Lexer, Source, TokenKind } from "graphql";
import { readFileSync } from "node:fs";
import { openDatabase } from "../core/db.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { silentLogger } from "../core/logger.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { NEW_DOCUMENT_BASE_TOKENS, newDocumentPoints } from "../gateway/validation-work.ts";
import { createPostgresDatabaseFromTemplate, databaseUrl, dropPostgresDatabase } from "../test/db.ts";
import { largestDocumentedRequests } from "../test/largest-request.ts";
import { fmt, log, median, post, processCpuMs, serveStack, stopChild, table } from "./common.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "300" }, runs: { type: "string", default: "3" } } });
const requests = Number(values.requests);
const runs = Number(values.runs);

const name = await createPostgresDatabaseFromTemplate();
const setup = await openDatabase({ url: databaseUrl(name), logger: silentLogger(), migrate: false });
const seeded = await seedFixtures(setup, { bets: 20, wallets: 4, provenLimit: 0, outbox: false, proofCache: readProofCache() });
await setup.close();
const chainId = seeded.networks[0]!.chainId;
const served = await serveStack(databaseUrl(name));
const cached = await serveStack(databaseUrl(name), [], { BENCH_RESPONSE_CACHE: "1" });
const schema = apiSchemaOf(readFileSync(new URL("../supergraph.graphql", import.meta.url), "utf8"));
const largest = largestDocumentedRequests(schema, chainId);
/** The largest networkConfigs without `indexing` (it moves with the head): every field a setting, stored a minute. */
function settingsOnly(query: string): string {
  const settings = query.replace(/\bindexing\s*\{[^{}]*\}/, "");
  if (settings === query) throw new Error("no indexing selection in the largest networkConfigs");
  return settings;
}

/** `cached`: asked of the child with the response cache on, every answer a hit. */
const documents: { name: string; query: string; operationName?: string; cached?: true }[] = [
  { name: "{ __typename }", query: "{ __typename }" },
  { name: "largest networkConfigs", query: largest.networkConfigs! },
  { name: "largest playerBets", query: largest.playerBets! },
  { name: "largest betResults", query: largest.betResults! },
  {
    name: "300 operations",
    query: Array.from({ length: 300 }, (_, i) => `query Q${i} { __typename }`).join("\n"),
    operationName: "Q0",
  },
  { name: "a comment variant of a stored answer (response cache on): networkConfigs' settings", query: settingsOnly(largest.networkConfigs!), cached: true },
  {
    // Near MAX_DOCUMENT_TOKENS, and cheap to validate: what the key's parse and print cost at most.
    name: "the same, 240 operations (response cache on)",
    query: Array.from({ length: 240 }, (_, i) => `query Q${i} { networkConfigs { chainId } }`).join("\n"),
    operationName: "Q0",
    cached: true,
  },
];

function tokens(query: string): number {
  const lexer = new Lexer(new Source(query));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count++;
  return count;
}

let counter = 0;
try {
  /** The server's CPU ms per request over `requests` sequential requests of `text(i)`. */
  const measure = async (text: (i: number) => string, document: (typeof documents)[number]): Promise<number> => {
    const server = document.cached ? cached : served;
    const before = processCpuMs(server.child.pid)!;
    for (let i = 0; i < requests; i++) {
      const { status, json } = await post(server.gateway, JSON.stringify({ query: text(i), operationName: document.operationName }));
      if (status !== 200 || json.errors) throw new Error(`HTTP ${status}: ${JSON.stringify(json.errors)}`);
    }
    return (processCpuMs(server.child.pid)! - before) / requests;
  };
  /** Asks the cache child for `query` until its answer is a hit (stored in the background of the miss). */
  const stored = async (query: string, operationName: string | undefined) => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const body = JSON.stringify({ query, operationName });
      const response = await fetch(cached.gateway, { method: "POST", headers: { "content-type": "application/json" }, body });
      await response.text();
      if (response.headers.get("x-cache") === "HIT") return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error("the answer is never a cache hit");
  };
  const rows: string[][] = [];
  for (const document of documents) {
    const repeated: number[] = [];
    const fresh: number[] = [];
    for (let run = 0; run < runs; run++) {
      // Stored for a minute (a setting's maxAge): stored again before each run.
      if (document.cached) await stored(document.query, document.operationName);
      repeated.push(await measure(() => document.query, document));
      fresh.push(await measure(() => `# ${++counter}\n${document.query}`, document));
    }
    const extra = median(fresh) - median(repeated);
    const count = tokens(document.query);
    rows.push([
      document.name,
      String(count),
      fmt.ms(median(repeated)),
      fmt.ms(median(fresh)),
      fmt.int(extra * 1000),
      fmt.int((extra * 1000) / (NEW_DOCUMENT_BASE_TOKENS + count)),
      fmt.int(newDocumentPoints(count)),
    ]);
  }
  log(`server CPU per request, ${requests} sequential requests, median of ${runs} runs; a point is priced as about a µs`);
  log(
    table(
      ["document", "tokens", "same text ms", "new text ms", "new − same µs", `µs / (${NEW_DOCUMENT_BASE_TOKENS} + tokens)`, "price past the free tokens"],
      rows,
      [false, true, true, true, true, true, true],
    ),
  );
} finally {
  await stopChild(served.child);
  await stopChild(cached.child);
  await dropPostgresDatabase(name);
}
