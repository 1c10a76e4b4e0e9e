import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { betResult as gameResult, FIELD_MODULUS, GAME_IDS, type GameId } from "../chain/betvault.ts";
import { pendingBet } from "../core/bet-row.ts";
import type { NetworkEntry } from "../core/networks.ts";
import { Prisma, type Bet, type BetResult } from "../prisma/generated/client.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { fairnessDrift } from "../test/fairness-counts.ts";
import { IndexerStore, type BlockRef } from "./store.ts";

// The trigger-maintained fairness counters ("FairnessCounter") against an independent recount
// (test/fairness-counts.ts) after every step of random histories written through the indexer's
// own store — commits of placements, settlements (with results) and refunds, reorg rollbacks,
// resets — and through plain SQL: a settled bet's game changed, a result rewritten, settled bets
// deleted with their results left to the foreign key's cascade, results truncated.

const PLAYER = "0x00000000000000000000000000000000000000aa";
const CONFIRMATIONS = 3;

type Step =
  | { kind: "place"; games: GameId[]; stakes: bigint[] }
  | { kind: "settle"; picks: number[]; outcomes: bigint[] }
  | { kind: "refund"; picks: number[] }
  | { kind: "reorg"; depth: number }
  | { kind: "reset" }
  | { kind: "retag"; pick: number; game: GameId }
  | { kind: "reprove"; pick: number; outcome: bigint }
  | { kind: "cascade"; pick: number }
  | { kind: "truncateResults" };

const outcome = fc.oneof(
  fc.bigInt({ min: 0n, max: FIELD_MODULUS - 1n }),
  fc.constantFrom(0n, 1n, FIELD_MODULUS - 1n, FIELD_MODULUS / 16n, (FIELD_MODULUS * 15n + 15n) / 16n, (FIELD_MODULUS * 15n + 15n) / 16n - 1n),
);
const game = fc.constantFrom(...GAME_IDS);
const pick = fc.nat({ max: 1000 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(fc.tuple(game, fc.bigInt({ min: 1n, max: 10n ** 24n })), { minLength: 1, maxLength: 6 })
      .map((bets) => ({ kind: "place" as const, games: bets.map((b) => b[0]), stakes: bets.map((b) => b[1]) })),
  },
  {
    weight: 4,
    arbitrary: fc
      .array(fc.tuple(pick, outcome), { minLength: 1, maxLength: 4 })
      .map((s) => ({ kind: "settle" as const, picks: s.map((x) => x[0]), outcomes: s.map((x) => x[1]) })),
  },
  { weight: 2, arbitrary: fc.array(pick, { minLength: 1, maxLength: 3 }).map((picks) => ({ kind: "refund" as const, picks })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 4 }).map((depth) => ({ kind: "reorg" as const, depth })) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
  { weight: 1, arbitrary: fc.tuple(pick, game).map(([p, g]) => ({ kind: "retag" as const, pick: p, game: g })) },
  { weight: 1, arbitrary: fc.tuple(pick, outcome).map(([p, o]) => ({ kind: "reprove" as const, pick: p, outcome: o })) },
  { weight: 1, arbitrary: pick.map((p) => ({ kind: "cascade" as const, pick: p })) },
  { weight: 1, arbitrary: fc.constant({ kind: "truncateResults" as const }) },
);

/** One network's chain as the test writes it: the cursor, block hashes, the next bet id. */
class Chain {
  head: BlockRef;
  private readonly hashes = new Map<bigint, string>();
  private nonce = 0;
  nextBetId = 1n;

  readonly chainId: number;
  readonly store: IndexerStore;
  readonly db: TestDatabase;
  constructor(chainId: number, store: IndexerStore, db: TestDatabase) {
    this.chainId = chainId;
    this.store = store;
    this.db = db;
    this.head = { number: 0n, hash: this.hash(0n) };
  }

  private hash(number: bigint): `0x${string}` {
    const hash = `0x${this.chainId.toString(16)}${number.toString(16).padStart(8, "0")}${(this.nonce++).toString(16).padStart(8, "0")}` as const;
    this.hashes.set(number, hash);
    return hash;
  }

  get entry(): NetworkEntry {
    return { chainId: this.chainId, name: `net${this.chainId}`, confirmations: CONFIRMATIONS, headBlock: this.head.number, finalizedBlock: null };
  }

  async register(): Promise<void> {
    await this.db.prisma.network.create({
      data: {
        chainId: BigInt(this.chainId),
        name: `net${this.chainId}`,
        confirmations: CONFIRMATIONS,
        verificationKeyJson: "{}",
        verificationKeySha256: `0x${"0".repeat(64)}`,
        cursor: {
          create: { indexedBlock: 0n, indexedBlockHash: this.head.hash, headBlock: 0n, finalizedBlock: 0n, updatedAt: new Date() },
        },
      },
    });
  }

  /** One new block holding `bets` (final state) and `results`, committed as the indexer does. */
  async commit(build: (block: BlockRef) => { bets: Bet[]; results: BetResult[] }): Promise<void> {
    const to = { number: this.head.number + 1n, hash: this.hash(this.head.number + 1n) };
    const { bets, results } = build(to);
    await this.store.commit({
      chainId: this.chainId,
      from: this.head,
      to,
      blocks: [to],
      bets,
      results,
      updates: [],
      state: { headBlock: to.number, finalizedBlock: 0n, isReady: true },
      network: this.entry,
      pruneBelow: 0n,
      events: bets.length,
    });
    this.head = to;
  }

  async reorg(depth: number): Promise<void> {
    const number = this.head.number - BigInt(depth) < 0n ? 0n : this.head.number - BigInt(depth);
    const ancestor = { number, hash: this.hashes.get(number) ?? "" } as BlockRef;
    await this.store.rollback({
      chainId: this.chainId,
      from: this.head,
      ancestor,
      network: this.entry,
      state: { headBlock: number, finalizedBlock: 0n, isReady: true },
    });
    this.head = ancestor;
  }

  async reset(): Promise<void> {
    await this.store.reset(this.chainId, 0n, this.entry);
    this.head = { number: 0n, hash: "" as `0x${string}` };
  }

  async bets(status?: Bet["status"]): Promise<Bet[]> {
    return this.db.prisma.bet.findMany({ where: { chainId: BigInt(this.chainId), ...(status ? { status } : {}) }, orderBy: { betId: "asc" } });
  }
}

const chosen = <T>(rows: T[], picks: number[]): T[] => [...new Set(picks.map((p) => rows[p % rows.length]!))];

async function run(chain: Chain, s: Step): Promise<void> {
  const chainId = BigInt(chain.chainId);
  switch (s.kind) {
    case "place":
      return chain.commit((block) => ({
        bets: s.games.map((g, i) =>
          pendingBet({
            chainId,
            betId: new Prisma.Decimal((chain.nextBetId++).toString()),
            player: PLAYER,
            token: "0x0000000000000000000000000000000000000000",
            stake: new Prisma.Decimal(s.stakes[i]!.toString()),
            game: g,
            clientSeed: "0x01",
            serverSeedHash: "0x02",
            placedBlock: block.number,
            placedLogIndex: i,
            placedBlockHash: block.hash,
            placedTx: "0x03",
            placedAt: 1_700_000_000n + block.number,
          }),
        ),
        results: [],
      }));
    case "settle": {
      const pending = await chain.bets("PENDING");
      if (pending.length === 0) return;
      const bets = chosen(pending, s.picks);
      return chain.commit((block) => ({
        bets: bets.map((b) => ({
          ...b,
          status: "SETTLED",
          settledBlock: block.number,
          settledBlockHash: block.hash,
          settledTx: "0x04",
          settledAt: 1n,
          lastChangeBlock: block.number,
        })),
        results: bets.map((b, i): BetResult => {
          const o = s.outcomes[i % s.outcomes.length]!;
          const { won, payout } = gameResult(b.game as GameId, o, BigInt(b.stake.toFixed(0)));
          return {
            chainId,
            betId: b.betId,
            outcome: new Prisma.Decimal(o.toString()),
            won,
            payout: new Prisma.Decimal(payout.toString()),
            proof: {},
            publicSignals: [],
            solidityCalldata: "",
            verified: false,
          };
        }),
      }));
    }
    case "refund": {
      const pending = await chain.bets("PENDING");
      if (pending.length === 0) return;
      const bets = chosen(pending, s.picks);
      return chain.commit((block) => ({
        bets: bets.map((b) => ({
          ...b,
          status: "REFUNDED",
          refundedBlock: block.number,
          refundedBlockHash: block.hash,
          refundedTx: "0x05",
          refundedAt: 1n,
          lastChangeBlock: block.number,
        })),
        results: [],
      }));
    }
    case "reorg":
      return chain.reorg(s.depth);
    case "reset":
      return chain.reset();
    case "retag": {
      const settled = await chain.bets("SETTLED");
      if (settled.length === 0) return;
      const [bet] = chosen(settled, [s.pick]);
      await chain.db.prisma.bet.update({ where: { chainId_betId: { chainId, betId: bet!.betId } }, data: { game: s.game } });
      return;
    }
    case "reprove": {
      const settled = await chain.bets("SETTLED");
      if (settled.length === 0) return;
      const [bet] = chosen(settled, [s.pick]);
      await chain.db.prisma.$executeRaw`
        UPDATE "BetResult" SET outcome = ${s.outcome.toString()}::numeric, won = NOT won, payout = payout + 7
        WHERE "chainId" = ${chainId} AND "betId" = ${bet!.betId}`;
      return;
    }
    case "cascade": {
      const settled = await chain.bets("SETTLED");
      if (settled.length === 0) return;
      const [bet] = chosen(settled, [s.pick]);
      await chain.db.prisma.$executeRaw`DELETE FROM "Bet" WHERE "chainId" = ${chainId} AND "betId" >= ${bet!.betId}`;
      return;
    }
    case "truncateResults":
      await chain.db.prisma.$executeRawUnsafe(`TRUNCATE "BetResult"`);
      return;
  }
}

let db: TestDatabase;
let store: IndexerStore;
let nextChainId = 1000;
beforeAll(async () => {
  db = await createTestDatabase();
  store = new IndexerStore(db);
});
afterAll(async () => {
  await db?.close();
});

describe("fairness counters", () => {
  it("equal a recount after every step of random histories of commits, settlements, refunds, reorgs, resets and plain SQL", async () => {
    // The property is not vacuous only if some step saw settled and refunded bets counted. Read
    // after every step, not at the end: a history may end with a reset, a reorg or a cascade that
    // removes them all (CI saw one). The first history settles and refunds, so both are reached.
    const seen = { settledBets: 0n, refundedBets: 0n };
    const placeSettleRefund: Step[] = [
      { kind: "place", games: ["dice", "wheel"], stakes: [3n, 5n] },
      { kind: "settle", picks: [0], outcomes: [7n] },
      { kind: "refund", picks: [0] },
    ];
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const chain = new Chain(nextChainId++, store, db);
        await chain.register();
        for (const s of steps) {
          await run(chain, s);
          expect(
            await fairnessDrift(db),
            JSON.stringify(s, (_k, v) => (typeof v === "bigint" ? v.toString() : v)),
          ).toEqual([]);
          const counted = await db.prisma.fairnessCounter.aggregate({
            where: { chainId: BigInt(chain.chainId) },
            _sum: { settledBets: true, refundedBets: true },
          });
          if ((counted._sum.settledBets ?? 0n) > 0n) seen.settledBets += 1n;
          if ((counted._sum.refundedBets ?? 0n) > 0n) seen.refundedBets += 1n;
        }
      }),
      { numRuns: 25, examples: [[placeSettleRefund]] },
    );
    expect(seen.settledBets).toBeGreaterThan(0n);
    expect(seen.refundedBets).toBeGreaterThan(0n);
  });

  it("counts a settlement's result under its game in the histogram bucket floor(16·outcome / r)", async () => {
    const chain = new Chain(nextChainId++, store, db);
    await chain.register();
    await run(chain, { kind: "place", games: ["dice", "dice", "wheel"], stakes: [100n, 300n, 50n] });
    const top = (FIELD_MODULUS * 15n + 15n) / 16n; // the first outcome of bucket 15
    await run(chain, { kind: "settle", picks: [0, 1, 2], outcomes: [top, top - 1n, 0n] });
    const rows = await db.prisma.fairnessCounter.findMany({ where: { chainId: BigInt(chain.chainId) }, orderBy: { game: "asc" } });
    const zeros = Array<bigint>(16).fill(0n);
    expect(rows.map((r) => ({ ...r, totalStake: r.totalStake.toFixed(0), totalPayout: r.totalPayout.toFixed(0) }))).toEqual([
      {
        chainId: BigInt(chain.chainId),
        game: "dice",
        settledBets: 2n,
        wonBets: BigInt(Number(top % 100n < 49n) + Number((top - 1n) % 100n < 49n)),
        refundedBets: 0n,
        totalStake: "400",
        totalPayout: String((top % 100n < 49n ? 200n : 0n) + ((top - 1n) % 100n < 49n ? 600n : 0n)),
        outcomeHistogram: zeros.map((z, i) => (i === 14 || i === 15 ? 1n : z)),
      },
      {
        chainId: BigInt(chain.chainId),
        game: "wheel",
        settledBets: 1n,
        wonBets: 1n,
        refundedBets: 0n,
        totalStake: "50",
        totalPayout: "490",
        outcomeHistogram: zeros.map((z, i) => (i === 0 ? 1n : z)),
      },
    ]);
  });

  it("refuses to change the key of a settled bet or of a result, and lets an unsettled bet's key change", async () => {
    const chain = new Chain(nextChainId++, store, db);
    await chain.register();
    await run(chain, { kind: "place", games: ["coinflip", "coinflip"], stakes: [1n, 1n] });
    await run(chain, { kind: "settle", picks: [0], outcomes: [2n] });
    const chainId = BigInt(chain.chainId);
    await expect(db.prisma.$executeRaw`UPDATE "Bet" SET "betId" = 77 WHERE "chainId" = ${chainId} AND "betId" = 1`).rejects.toThrow(/key of a settled bet/);
    await expect(db.prisma.$executeRaw`UPDATE "BetResult" SET "betId" = 2 WHERE "chainId" = ${chainId} AND "betId" = 1`).rejects.toThrow(
      /key of a settled bet/,
    );
    await db.prisma.$executeRaw`UPDATE "Bet" SET "betId" = 78 WHERE "chainId" = ${chainId} AND "betId" = 2`;
    expect(await fairnessDrift(db)).toEqual([]);
  });

  it("empties with TRUNCATE of the bets", async () => {
    expect(await db.prisma.fairnessCounter.count()).toBeGreaterThan(0);
    await db.prisma.$executeRawUnsafe(`TRUNCATE "Bet" CASCADE`);
    expect(await db.prisma.fairnessCounter.count()).toBe(0);
    expect(await fairnessDrift(db)).toEqual([]);
  });
});
