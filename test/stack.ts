import { loadConfig } from "../core/config.ts";
import { silentLogger, type Logger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { GATEWAY_SECTIONS, gatewaySettings, type GatewaySettings } from "../bin/wiring.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import type { GatewayDeps } from "../gateway/server.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures, type FixtureOptions, type FixtureSummary } from "../fixtures/seed.ts";
import { createTestDatabase } from "./db.ts";

/**
 * A gateway's settings as tests run it: the configuration's defaults, mapped as every process maps
 * them (bin/wiring.ts), without a per-client rate limit or a response cache unless a test asks.
 * `env` adds variables; `overrides` replaces settings.
 */
export function testGatewaySettings(overrides: Partial<GatewaySettings> = {}, env: Record<string, string> = {}): GatewaySettings {
  const config = loadConfig(GATEWAY_SECTIONS, { RATE_LIMIT_POINTS: "0", RATE_LIMIT_MAX_IN_FLIGHT: "0", RESPONSE_CACHE: "off", ...env });
  return { ...gatewaySettings(config, { logger: silentLogger() }), ...overrides };
}

export interface GraphQLResponse<TData = Record<string, unknown>> {
  data?: TData | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

export interface TestStack {
  db: Awaited<ReturnType<typeof createTestDatabase>>;
  stack: RunningStack;
  fixtures: FixtureSummary;
  url: string;
  /** POST a query to the gateway (or to `endpoint`) and return the parsed body and status. */
  gql<TData = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    endpoint?: string,
  ): Promise<GraphQLResponse<TData> & { status: number }>;
  close(): Promise<void>;
}

/** An isolated database with the fixture set, the three subgraphs and the gateway on loopback. */
export async function startTestStack(
  fixtures: Partial<Omit<FixtureOptions, "proofCache">> = {},
  options: {
    production?: boolean;
    supergraphPath?: string;
    onQuery?: (sql: string, params: string) => void;
    networkTtlMs?: number;
    /** How long the subgraphs hold a database's indexed heads (kit/indexed-heads.ts); default theirs. */
    headsTtlMs?: number;
    redis?: GatewaySettings["redis"];
    protection?: Pick<GatewaySettings, "limits" | "rateLimit" | "inFlight">;
    responseCache?: GatewaySettings["responseCache"];
    responseCacheGenerationPollMs?: number;
    logger?: Logger;
    /** PostgreSQL only: the database's statement timeout (DATABASE_STATEMENT_TIMEOUT_MS). */
    statementTimeoutMs?: number;
    /** The web pages' routes and GraphiQL (web/server.ts createLivePage), as the composition root hands them in. */
    web?: Pick<GatewayDeps, "routes" | "graphiql">;
  } = {},
): Promise<TestStack> {
  const db = await createTestDatabase({ onQuery: options.onQuery, statementTimeoutMs: options.statementTimeoutMs });
  const summary = await seedFixtures(db, { bets: 120, ...fixtures, proofCache: readProofCache() });
  const production = options.production ?? false;
  const stack = await startStack({
    deps: {
      db,
      logger: options.logger ?? silentLogger(),
      networks: new NetworkDirectory(db, options.networkTtlMs),
      production,
      ...(options.headsTtlMs !== undefined ? { headsTtlMs: options.headsTtlMs } : {}),
    },
    host: "127.0.0.1",
    port: 0,
    gateway: {
      ...testGatewaySettings(
        {
          production,
          redis: options.redis,
          ...options.protection,
          responseCache: options.responseCache,
          ...(options.responseCacheGenerationPollMs !== undefined ? { responseCacheGenerationPollMs: options.responseCacheGenerationPollMs } : {}),
        },
        options.supergraphPath ? { SUPERGRAPH_PATH: options.supergraphPath } : {},
      ),
      ...options.web,
    },
  });
  return {
    db,
    stack,
    fixtures: summary,
    url: stack.url,
    async gql(query, variables, endpoint) {
      const response = await fetch(endpoint ?? `${stack.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...((await response.json()) as GraphQLResponse<never>) };
    },
    async close() {
      await stack.stop();
      await db.close();
    },
  };
}

/**
 * A second stack over the test stack's database whose gateway reaches its subgraphs over loopback
 * HTTP, as separate processes do (the test stack calls them in process, as `npm start` does).
 */
export function startHttpTransportStack(t: TestStack, options: { production: boolean }): Promise<RunningStack> {
  return startStack({
    deps: { db: t.db, logger: silentLogger(), networks: new NetworkDirectory(t.db), production: options.production },
    host: "127.0.0.1",
    port: 0,
    gateway: testGatewaySettings({ production: options.production }),
    subgraphTransport: "http",
  });
}

const UINT256 = /^(0|[1-9][0-9]*)$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const BYTES32 = /^0x[0-9a-f]{64}$/;
const UINT256_FIELDS = new Set([
  "betId",
  "stake",
  "placedBlock",
  "placedAt",
  "settledBlock",
  "settledAt",
  "refundedBlock",
  "refundedAt",
  "confirmations",
  "outcome",
  "payout",
  "indexedBlock",
  "headBlock",
  "finalizedBlock",
  "deployBlock",
  "piA",
  "piB",
  "piC",
  "publicSignals",
  "settledBets",
  "wonBets",
  "refundedBets",
  "totalStake",
  "totalPayout",
  "outcomeHistogram",
  "finalizedSettledBets",
  "block",
]);
const ADDRESS_FIELDS = new Set(["player", "token", "address"]);
const BYTES32_FIELDS = new Set(["clientSeed", "serverSeedHash", "placedTx", "settledTx", "refundedTx", "sha256", "hash"]);

/**
 * Walks a response and returns every place that breaks the contract's conventions: on-chain
 * integers as decimal strings, addresses/hashes lowercase hex, chainId a JSON number, and no key
 * that could carry a server seed.
 */
export function conventionViolations(value: unknown, path = "$"): string[] {
  const problems: string[] = [];
  const visit = (node: unknown, at: string, field: string | undefined, parent: object | undefined) => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) visit(item, `${at}[${i}]`, field, parent);
      return;
    }
    if (node && typeof node === "object") {
      for (const [key, child] of Object.entries(node)) {
        if (/seed/i.test(key) && key !== "clientSeed" && key !== "serverSeedHash") problems.push(`${at}.${key}: seed-like key`);
        visit(child, `${at}.${key}`, key, node);
      }
      return;
    }
    if (node === null || field === undefined) return;
    // NetworkConfig.confirmations is a GraphQL Int (a setting); Bet.confirmations is an on-chain count.
    const networkSetting = field === "confirmations" && parent !== undefined && !("betId" in parent) && !("finalized" in parent);
    if (UINT256_FIELDS.has(field) && !networkSetting && !(typeof node === "string" && UINT256.test(node)))
      problems.push(`${at}: ${JSON.stringify(node)} is not a decimal string`);
    if (ADDRESS_FIELDS.has(field) && !(typeof node === "string" && ADDRESS.test(node)))
      problems.push(`${at}: ${JSON.stringify(node)} is not a lowercase address`);
    if (BYTES32_FIELDS.has(field) && !(typeof node === "string" && BYTES32.test(node)))
      problems.push(`${at}: ${JSON.stringify(node)} is not lowercase bytes32`);
    if (field === "chainId" && !(typeof node === "number" && Number.isSafeInteger(node))) problems.push(`${at}: ${JSON.stringify(node)} is not a JSON number`);
  };
  visit(value, path, undefined, undefined);
  return problems;
}
