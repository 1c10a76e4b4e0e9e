// Follows a wallet live: its latest bets through GraphQL, then every change as it happens over
// Socket.IO, resuming by seq across reconnects and failing over between realtime nodes.
//
//   npx tsx client/examples/follow-wallet.ts 0x70997970c51812dc3a010c7d01b50e0d17dc79c8
//   npx tsx client/examples/follow-wallet.ts <wallet> --api http://127.0.0.1:4000 \
//     --realtime http://rt1:4100,http://rt2:4100 --path /ws
//
// Defaults: the API of `npm start` (GraphQL and Socket.IO on http://127.0.0.1:4000, path /socket.io).
// Verifies each newly settled bet's proof with snarkjs, here, against the served verification key.
// Imports only the package's entry points ("../index.ts", "../snarkjs.ts"): the packed package ships a
// copy that imports them by name (client/scripts/pack-examples.ts), which client/pack.test.ts runs.
import { parseArgs } from "node:util";
import { betWithProofQuery, createGraphQLClient, openBetsFeed, playerBetsQuery, verificationKeyQuery, verifyBetProof } from "../index.ts";
import { loadGroth16, releaseGroth16 } from "../snarkjs.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { api: { type: "string", default: "http://127.0.0.1:4000" }, realtime: { type: "string" }, path: { type: "string", default: "/socket.io" } },
});
const wallet = positionals[0];
if (!wallet) {
  process.stderr.write("usage: follow-wallet.ts <wallet> [--api URL] [--realtime URL,URL…] [--path /socket.io|/ws]\n");
  process.exit(2);
}
const out = (line: string) => process.stdout.write(`${new Date().toISOString()}  ${line}\n`);
const api = createGraphQLClient({ url: `${values.api}/graphql` });
const keys = new Map<number, Promise<string>>();
const keyOf = (chainId: number) => {
  if (!keys.has(chainId))
    keys.set(
      chainId,
      api.request(verificationKeyQuery, { chainId }).then((r) => r.networkConfigs[0]!.verificationKey.json),
    );
  return keys.get(chainId)!;
};

async function showHistory(): Promise<void> {
  const { playerBets, pendingBetCount } = await api.request(playerBetsQuery, { wallet: wallet!, first: 5 });
  out(`${playerBets.totalCount} bets, ${pendingBetCount} pending; latest:`);
  for (const bet of playerBets.nodes)
    out(`  chain ${bet.chainId} bet ${bet.betId}: ${bet.status}${bet.result ? (bet.result.won ? `, won ${bet.result.payout} wei` : ", lost") : ""}`);
}

async function checkProof(chainId: number, betId: string): Promise<void> {
  const { betResult } = await api.request(betWithProofQuery, { chainId, betId });
  if (!betResult) return;
  const check = await verifyBetProof(betResult, await keyOf(chainId), await loadGroth16());
  out(`    proof of chain ${chainId} bet ${betId}: ${check.verified ? "verified ✓ (snarkjs, here)" : `NOT verified (${check.reason})`}`);
}

// Live first, then the history: whatever happens in between shows up in one or the other.
let live!: () => void;
const ready = new Promise<void>((resolve) => (live = resolve));
const feed = openBetsFeed({
  urls: values.realtime ? values.realtime.split(",") : [values.api],
  path: values.path,
  subscription: { wallets: [wallet] },
  onUpdate: (update, meta) => {
    out(`#${update.seq} ${update.type.padEnd(8)} chain ${update.chainId} bet ${update.betId}${meta.replayed ? " (replayed after a reconnect)" : ""}`);
    if (update.type === "SETTLED") void checkProof(update.chainId, update.betId);
  },
  onStatus: (status) => {
    out(`[${status.state}] ${status.url}${status.attempt ? ` (attempt ${status.attempt})` : ""}`);
    if (status.state === "live") live();
  },
  onResync: () => showHistory(),
  onError: (error) => out(`refused: ${error.code} ${error.message}`),
});
await ready;
await showHistory();

process.once("SIGINT", async () => {
  feed.close();
  await releaseGroth16();
  out(`stopped; resume later from seq ${feed.lastSeq ?? "(none)"}`);
  process.exit(0);
});
