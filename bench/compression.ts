// Response compression: bytes and CPU per answer for the largest documented answers, identity
// beside gzip and Brotli at the levels one could pick (COMPRESSION_BROTLI_QUALITY).
//
//   npx tsx bench/compression.ts [--iterations 200]
//
// Serves the fixture set through the real gateway (test/stack.ts, PGlite unless TEST_DB says
// otherwise), takes its answers to `betResults` (100 ids with proofs) and `playerBets(first: 100)`,
// then times each encoder on them in this process (CPU time via process.cpuUsage).
import { parseArgs } from "node:util";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { startTestStack } from "../test/stack.ts";
import { fmt, log, table } from "./common.ts";

const { values } = parseArgs({ options: { iterations: { type: "string", default: "200" } } });
const iterations = Number(values.iterations);

const t = await startTestStack({ bets: 400, provenLimit: 200 });
try {
  const settled = await t.gql<{ playerBets: { nodes: { betId: string }[] } }>(
    `{ playerBets(wallet: "${t.fixtures.whale}", first: 100, filter: { status: [SETTLED] }) { nodes { betId } } }`,
  );
  const ids = settled.data!.playerBets.nodes.map((bet) => bet.betId);
  if (ids.length === 0) throw new Error(`no settled bets: ${JSON.stringify(settled)}`);
  const probe = await t.gql(`query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`, { ids });
  if (probe.errors) throw new Error(JSON.stringify(probe.errors));
  const checked = (answer: { errors?: unknown }) => {
    if (answer.errors) throw new Error(JSON.stringify(answer.errors).slice(0, 500));
    return JSON.stringify(answer);
  };
  const answers = {
    [`betResults(${ids.length} ids) + proof`]: checked(
      await t.gql(
        `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { chainId betId player stake game status result { outcome won payout proof { protocol curve piA piB piC publicSignals solidityCalldata verified } } } }`,
        { ids },
      ),
    ),
    "playerBets(first: 100) + result": checked(
      await t.gql(
        `{ playerBets(wallet: "${t.fixtures.whale}", first: 100) { totalCount nodes { chainId betId player token stake game clientSeed serverSeedHash status placedBlock placedTx placedAt confirmations finalized result { outcome won payout } } } }`,
      ),
    ),
  };

  const encoders: [string, (body: string) => Buffer][] = [
    ["identity", (body) => Buffer.from(body)],
    ["gzip 1", (body) => gzipSync(body, { level: 1 })],
    ["gzip 6 (default)", (body) => gzipSync(body, { level: 6 })],
    ...[1, 4, 5, 6, 11].map(
      (quality) =>
        [
          `br ${quality}${quality === 4 ? " (default)" : ""}`,
          (body: string) =>
            brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } }),
        ] as [string, (body: string) => Buffer],
    ),
  ];

  for (const [name, body] of Object.entries(answers)) {
    const rows: string[][] = [];
    const identityBytes = Buffer.byteLength(body);
    for (const [encoder, encode] of encoders) {
      const runs = encoder === "br 11" ? Math.max(5, Math.floor(iterations / 20)) : iterations;
      encode(body); // warm
      const before = process.cpuUsage();
      let bytes = 0;
      for (let i = 0; i < runs; i++) bytes = encode(body).length;
      const cpu = process.cpuUsage(before);
      const cpuMs = (cpu.user + cpu.system) / 1000 / runs;
      rows.push([encoder, fmt.int(bytes), (bytes / identityBytes).toFixed(3), cpuMs.toFixed(3), encoder === "identity" ? "—" : fmt.int(1000 / cpuMs)]);
    }
    log(`\n${name}: ${identityBytes} bytes`);
    log(table(["encoding", "bytes", "÷ identity", "CPU ms / answer", "answers / CPU-s"], rows, [false, true, true, true, true]));
  }
} finally {
  await t.close();
}
