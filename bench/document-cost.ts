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
const schema = apiSchemaOf(readFileSync(new URL("../supergraph.graphql", import.meta.url), "utf8"));
const largest = largestDocumentedRequests(schema, chainId);
const documents: { name: string; query: string; operationName?: string }[] = [
  { name: "{ __typename }", query: "{ __typename }" },
  { name: "largest networkConfigs", query: largest.networkConfigs! },
  { name: "largest playerBets", query: largest.playerBets! },
  { name: "largest betResults", query: largest.betResults! },
  {
    name: "300 operations",
    query: Array.from({ length: 300 }, (_, i) => `query Q${i} { __typename }`).join("\n"),
    operationName: "Q0",
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
  const measure = async (text: (i: number) => string, operationName: string | undefined): Promise<number> => {
    const before = processCpuMs(served.child.pid)!;
    for (let i = 0; i < requests; i++) {
      const { status, json } = await post(served.gateway, JSON.stringify({ query: text(i), operationName }));
      if (status !== 200 || json.errors) throw new Error(`HTTP ${status}: ${JSON.stringify(json.errors)}`);
    }
    return (processCpuMs(served.child.pid)! - before) / requests;
  };
  const rows: string[][] = [];
  for (const document of documents) {
    const repeated: number[] = [];
    const fresh: number[] = [];
    for (let run = 0; run < runs; run++) {
      repeated.push(await measure(() => document.query, document.operationName));
      fresh.push(await measure(() => `# ${++counter}\n${document.query}`, document.operationName));
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
  await dropPostgresDatabase(name);
}
