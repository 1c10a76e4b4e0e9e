import * as snarkjs from "snarkjs";
import { io as ioClient } from "socket.io-client";
import { createPublicClient, http, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSolidityCalldata } from "../chain/betvault.ts";
import { DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import { groth16VerifierAbi } from "../chain/generated/artifacts.ts";
import { startService, type RunningService } from "../test/service.ts";

// `npm start` as a new user runs it: no database server, a fresh data directory. Within a minute
// a simulated wallet has bets in all three states, a settled bet's proof verifies with snarkjs and
// with the deployed verifier, and a Socket.IO client following the wallet sees PLACED then SETTLED.

let service: RunningService;
let apiUrl: string;
let rpcUrl: string;
const players = DEV_PLAYER_KEYS.map((key) => privateKeyToAccount(key).address.toLowerCase());

beforeAll(async () => {
  service = await startService();
  ({ url: apiUrl, rpcUrl } = service);
}, 120_000);

afterAll(() => service?.stop());

async function gql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const response = await fetch(`${apiUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data: T; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data;
}

describe("npm start on a clean checkout", () => {
  it("follows a wallet live over Socket.IO: PLACED, then SETTLED", async () => {
    const socket = ioClient(apiUrl, { path: "/socket.io", transports: ["websocket"], reconnection: false, forceNew: true });
    // Collected here, asserted below: an expect in a socket callback would not fail the test.
    const seen: { type: string; chainId: number; betId: string; seq: unknown }[] = [];
    socket.on("bets:update", (update: { type: string; chainId: number; betId: string; seq: unknown }) => seen.push(update));
    // Two demo chains: a bet is its chain id and bet id.
    const placedBefore = (u: (typeof seen)[number]) => seen.some((p) => p.type === "PLACED" && p.chainId === u.chainId && p.betId === u.betId);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("connect_error", reject);
    });
    const ack = (await socket.timeout(10_000).emitWithAck("bets:subscribe", { wallets: players.slice(0, 3) })) as { wallets?: string[] };
    expect(ack.wallets).toHaveLength(3);
    for (let i = 0; i < 120 && !seen.some((u) => u.type === "SETTLED" && placedBefore(u)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    socket.close();
    const settled = seen.find((u) => u.type === "SETTLED" && placedBefore(u))!;
    expect(settled).toBeDefined();
    expect(seen.findIndex((u) => u.type === "PLACED" && u.chainId === settled.chainId && u.betId === settled.betId)).toBeLessThan(seen.indexOf(settled));
    expect(seen.filter((u) => typeof u.seq !== "string")).toEqual([]);
  });

  it("serves a simulated wallet's bets in all three states within a minute", async () => {
    let statuses = new Set<string>();
    for (let i = 0; i < 120 && statuses.size < 3; i++) {
      const data = await gql<Record<string, { nodes: { status: string }[] }>>(
        `{ ${players.map((p, n) => `p${n}: playerBets(wallet: "${p}", first: 100) { nodes { status } }`).join(" ")} }`,
      );
      statuses = new Set(Object.values(data).flatMap((page) => page.nodes.map((bet) => bet.status)));
      if (statuses.size < 3) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect([...statuses].sort()).toEqual(["PENDING", "REFUNDED", "SETTLED"]);
  });

  it("reports the database, the subgraphs, the indexer and the Socket.IO feed in /health", async () => {
    const response = await fetch(`${apiUrl}/health`);
    const report = (await response.json()) as { checks: { name: string; status: string }[] };
    expect(response.status).toBe(200);
    const checks = Object.fromEntries(report.checks.map((c) => [c.name, c.status]));
    expect(checks).toMatchObject({ database: "OK", "subgraph:networks": "OK", "subgraph:results": "OK", "subgraph:history": "OK", feed: "OK" });
    expect(Object.keys(checks).some((name) => name.startsWith("indexer:"))).toBe(true);
  });

  it("serves a settled bet whose proof snarkjs and the deployed verifier accept", async () => {
    const data = await gql<{ networkConfigs: { chainId: number; contracts: { name: string; address: Address }[]; verificationKey: { json: string } }[] }>(
      `{ networkConfigs { chainId contracts { name address } verificationKey { json } } }`,
    );
    // The honest demo chain (31337); the other one (1337) has a verifier that accepts anything: bin/start-unverified.test.ts.
    const network = data.networkConfigs.find((n) => n.chainId === 31337)!;
    const bets = await gql<Record<string, { nodes: { betId: string; status: string }[] }>>(
      `{ ${players.map((p, n) => `p${n}: playerBets(wallet: "${p}", filter: { chainId: 31337, status: [SETTLED] }, first: 1) { nodes { betId status } }`).join(" ")} }`,
    );
    const betId = Object.values(bets).flatMap((page) => page.nodes)[0]!.betId;
    const { betResult } = await gql<{
      betResult: {
        result: {
          proof: {
            protocol: string;
            curve: string;
            piA: string[];
            piB: string[][];
            piC: string[];
            publicSignals: string[];
            solidityCalldata: string;
            verified: boolean;
          };
        };
      };
    }>(
      `query ($c: ChainId!, $b: UInt256!) { betResult(chainId: $c, betId: $b) { result { proof { protocol curve piA piB piC publicSignals solidityCalldata verified } } } }`,
      { c: network.chainId, b: betId },
    );
    const proof = betResult.result.proof;
    expect(proof.verified).toBe(true);
    const snarkProof = { pi_a: proof.piA, pi_b: proof.piB, pi_c: proof.piC, protocol: proof.protocol, curve: proof.curve };
    expect(await snarkjs.groth16.verify(JSON.parse(network.verificationKey.json) as object, proof.publicSignals, snarkProof)).toBe(true);

    const { pA, pB, pC, pubSignals } = parseSolidityCalldata(proof.solidityCalldata);
    const verifier = network.contracts.find((c) => c.name === "Groth16Verifier")!.address;
    const client = createPublicClient({ transport: http(rpcUrl) });
    const accepted = await client.readContract({
      address: verifier,
      abi: groth16VerifierAbi,
      functionName: "verifyProof",
      args: [pA, pB, pC, pubSignals as [bigint, bigint, bigint, bigint]],
    });
    expect(accepted).toBe(true);
  });
});
