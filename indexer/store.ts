/**
 * Everything the indexer writes, each operation one transaction: a batch of blocks with their
 * events, block hashes and the cursor; a reorg rollback; a network reset; registration at start.
 *
 * Two guards hold in every writing transaction:
 * - The cursor row is locked (`FOR UPDATE`) and must still be where this indexer left it, so rows
 *   and cursor always move together and a second writer (or a lost commit acknowledgement) is
 *   detected instead of double-applied (CursorConflictError, retryable: reload and go on).
 * - Outbox rows go through core/outbox.ts (appendBetUpdates), the one writer of BetUpdate: it
 *   takes the outbox writers' advisory lock right before its insert, held until this transaction
 *   commits, so seq order is commit order across every network, process and other writer. The
 *   outbox is therefore written last in each transaction, holding the lock as briefly as possible
 *   (but in a reset and a rollback: their rows are built from the bets they then delete or revert).
 */
import type { Hex } from "viem";
import type { Database } from "../core/db.ts";
import type { NetworkEntry } from "../core/networks.ts";
import { appendBetUpdates, appendRemovedUpdates, appendRollbackUpdates, type BetUpdateRow } from "../core/outbox.ts";
import { Prisma, type Bet, type BetResult, type PrismaClient } from "../prisma/generated/client.ts";
import { betIdKey } from "./apply.ts";
import type { NetworkConfig } from "./config.ts";
import { CursorConflictError, DeploymentChangedError, IndexerInvariantError } from "./errors.ts";
import { claimWritten, finalizeBets } from "./finalize.ts";
import type { VerificationKeyFile } from "./proofs.ts";

type Tx = Prisma.TransactionClient;

export interface BlockRef {
  number: bigint;
  hash: Hex;
}

export interface StoredCursor {
  number: bigint;
  /** "" until the sync loop has read the cursor's first block from the chain. */
  hash: Hex | "";
  headBlock: bigint;
  finalizedBlock: bigint;
}

/** What the cursor says besides its position. */
export interface CursorState {
  headBlock: bigint;
  finalizedBlock: bigint;
  isReady: boolean;
}

export interface CommitInfo {
  chainId: number;
  from: BlockRef;
  to: BlockRef;
  events: number;
}

/** A Token row (indexer/tokens.ts): lowercase address, 0x0…0 for the native coin. */
export interface TokenRow {
  chainId: bigint;
  address: string;
  symbol: string;
  decimals: number;
}

const NATIVE = "0x0000000000000000000000000000000000000000";

export interface StoreHooks {
  /** Runs inside a commit's transaction after every write (outbox included), right before COMMIT: tests inject crashes and delays here. */
  beforeCommit?: (info: CommitInfo) => void | Promise<void>;
}

const TX_OPTIONS = { maxWait: 30_000, timeout: 120_000 } as const;

// The statements of every commit, of registration and of the cursor's first reads are raw SQL: a Prisma client compiles each kind of
// ORM operation on its first use (update, createMany, deleteMany: ~30–100 ms of CPU each), which a
// backfill starting on a fresh client pays inside its first commits.
/** What Prisma writes for `updatedAt: new Date()` into a timestamp(3) without time zone: UTC. */
const UTC_NOW = Prisma.sql`(now() AT TIME ZONE 'UTC')::timestamp(3)`;

export class IndexerStore {
  private readonly db: Database;
  private readonly hooks: StoreHooks;
  constructor(db: Database, hooks: StoreHooks = {}) {
    this.db = db;
    this.hooks = hooks;
  }

  private get prisma(): PrismaClient {
    return this.db.prisma;
  }

  // ------------------------------------------------------------------------------ registration

  /**
   * Upserts the Network and Contract rows (the verification key text exactly as in the file, and
   * its sha256) and creates the cursor at the block before BetVault's deployment when missing. A
   * network whose stored contracts differ from the configured ones was indexed from another
   * deployment: with `resetOnChainMismatch` its data is wiped first, otherwise that is an error;
   * under another verification key it is wiped too (`keyChanged`). Returns the cursor; its hash is "" until the sync loop has read that block from the chain.
   */
  async register(network: NetworkConfig, vk: VerificationKeyFile): Promise<StoredCursor & { keyChanged?: { from: string; removed: number } }> {
    const chainId = BigInt(network.chainId);
    const contracts = Object.entries(network.contracts).map(([name, c]) => ({ name, address: c.address, deployBlock: c.deployBlock }));
    const start = network.contracts.BetVault.deployBlock > 0n ? network.contracts.BetVault.deployBlock - 1n : 0n;

    const stored = await this.prisma.$queryRaw<{ name: string; address: string; deployBlock: bigint }[]>`
      SELECT name, address, "deployBlock" FROM "Contract" WHERE "chainId" = ${chainId}`;
    const changed =
      stored.length > 0 &&
      contracts.some((c) => {
        const s = stored.find((row) => row.name === c.name);
        return !s || s.address !== c.address || s.deployBlock !== c.deployBlock;
      });
    // Results checked under another key are never served as verified under this one: re-indexed.
    const known = (await this.prisma.network.findUnique({ where: { chainId }, select: { verificationKeySha256: true } }))?.verificationKeySha256;
    const keyChanged = known !== undefined && known !== vk.sha256 ? { from: known, removed: 0 } : undefined;
    if (keyChanged && !changed) keyChanged.removed = await this.reset(network.chainId, start, emptyEntry(network));
    if (changed) {
      if (!network.resetOnChainMismatch) {
        throw new DeploymentChangedError(`the configured contracts of chain ${network.chainId} differ from those already indexed`, {
          chainId: network.chainId,
          details: "set resetOnChainMismatch to re-index from the new deployment, or use another database",
        });
      }
      await this.reset(network.chainId, start, emptyEntry(network));
    }

    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`
        INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256")
        VALUES (${chainId}::bigint, ${network.name}, ${network.confirmations}::int, ${vk.json}, ${vk.sha256})
        ON CONFLICT ("chainId") DO UPDATE SET name = EXCLUDED.name, confirmations = EXCLUDED.confirmations,
          "verificationKeyJson" = EXCLUDED."verificationKeyJson", "verificationKeySha256" = EXCLUDED."verificationKeySha256"`;
      await tx.$executeRaw`
        DELETE FROM "Contract" WHERE "chainId" = ${chainId}
          AND name NOT IN (SELECT jsonb_array_elements_text(${JSON.stringify(contracts.map((c) => c.name))}::jsonb))`;
      for (const c of contracts) {
        await tx.$executeRaw`
          INSERT INTO "Contract" ("chainId", name, address, "deployBlock") VALUES (${chainId}::bigint, ${c.name}, ${c.address}, ${c.deployBlock}::bigint)
          ON CONFLICT ("chainId", name) DO UPDATE SET address = EXCLUDED.address, "deployBlock" = EXCLUDED."deployBlock"`;
      }
      // The native coin's row follows the configuration (the only token not read from the chain).
      const { symbol, decimals } = network.nativeCurrency;
      await tx.$executeRaw`
        INSERT INTO "Token" ("chainId", address, symbol, decimals) VALUES (${chainId}::bigint, ${NATIVE}, ${symbol}, ${decimals}::int)
        ON CONFLICT ("chainId", address) DO UPDATE SET symbol = EXCLUDED.symbol, decimals = EXCLUDED.decimals`;
      // Not ready until this run has caught up with the head again.
      const [cursor] = await tx.$queryRaw<CursorRow[]>`
        INSERT INTO "IndexingCursor" ("chainId", "indexedBlock", "indexedBlockHash", "headBlock", "finalizedBlock", "isReady", "updatedAt")
        VALUES (${chainId}::bigint, ${start}::bigint, '', ${start}::bigint, 0, false, ${UTC_NOW})
        ON CONFLICT ("chainId") DO UPDATE SET "isReady" = false, "updatedAt" = EXCLUDED."updatedAt"
        RETURNING ${CURSOR_COLUMNS}`;
      if (!cursor) throw new IndexerInvariantError(`no cursor for chain ${network.chainId}`);
      return { ...toStoredCursor(cursor), ...(keyChanged ? { keyChanged } : {}) };
    }, TX_OPTIONS);
  }

  /** Records the hash of the cursor's block the first time it is read from the chain. */
  async anchorCursor(chainId: number, block: BlockRef): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      await lockCursor(tx, chainId, { number: block.number, hash: "" });
      await tx.$executeRaw`
        INSERT INTO "IndexedBlock" ("chainId", "number", hash) VALUES (${BigInt(chainId)}::bigint, ${block.number}::bigint, ${block.hash})
        ON CONFLICT ("chainId", "number") DO UPDATE SET hash = EXCLUDED.hash`;
      await tx.$executeRaw`
        UPDATE "IndexingCursor" SET "indexedBlockHash" = ${block.hash}, "updatedAt" = ${UTC_NOW} WHERE "chainId" = ${BigInt(chainId)}`;
    }, TX_OPTIONS);
  }

  async cursor(chainId: number): Promise<StoredCursor> {
    const [row] = await this.prisma.$queryRaw<CursorRow[]>`SELECT ${CURSOR_COLUMNS} FROM "IndexingCursor" WHERE "chainId" = ${BigInt(chainId)}`;
    if (!row) throw new IndexerInvariantError(`no cursor for chain ${chainId}`);
    return toStoredCursor(row);
  }

  /** Stored hash of block `number`, when it is still kept. */
  async blockHash(chainId: number, number: bigint): Promise<Hex | undefined> {
    const row = await this.prisma.indexedBlock.findUnique({ where: { chainId_number: { chainId: BigInt(chainId), number } } });
    return row?.hash as Hex | undefined;
  }

  /** Stored bets by id (decimal string). */
  async bets(chainId: number, betIds: readonly bigint[]): Promise<Map<string, Bet>> {
    const found = new Map<string, Bet>();
    for (let i = 0; i < betIds.length; i += 5_000) {
      const rows = await this.prisma.bet.findMany({
        where: { chainId: BigInt(chainId), betId: { in: betIds.slice(i, i + 5_000).map((id) => new Prisma.Decimal(id.toString(10))) } },
      });
      for (const row of rows) found.set(betIdKey(row.betId), row);
    }
    return found;
  }

  /** Which of `addresses` already have a Token row. */
  async storedTokens(chainId: number, addresses: readonly string[]): Promise<Set<string>> {
    const rows = await this.prisma.token.findMany({ where: { chainId: BigInt(chainId), address: { in: [...addresses] } }, select: { address: true } });
    return new Set(rows.map((r) => r.address));
  }

  /**
   * Refreshes head, finalized block, readiness and updatedAt without moving the cursor, and in the
   * same transaction announces the bets that became final (see finalizeBets). Resolves to how many
   * FINALIZED updates it appended.
   */
  async touchCursor(chainId: number, state: CursorState, network: NetworkEntry): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      await tx.indexingCursor.update({ where: { chainId: BigInt(chainId) }, data: { ...state, updatedAt: new Date() } });
      const finalized = await finalizeBets(tx, chainId, state.finalizedBlock, network);
      await appendBetUpdates(tx, finalized);
      return finalized.length;
    }, TX_OPTIONS);
  }

  // ------------------------------------------------------------------------------------ commit

  /**
   * One transaction: the new tokens' rows, the bets (final state), results, block hashes, the
   * cursor moved from `from` to `to`, and the outbox rows: the events' own, then a FINALIZED row per
   * bet the advanced head made final (see finalizeBets). Block rows below `pruneBelow` are dropped.
   * Resolves to how many FINALIZED rows it appended.
   */
  async commit(input: {
    chainId: number;
    from: BlockRef;
    to: BlockRef;
    blocks: readonly BlockRef[];
    tokens?: readonly TokenRow[];
    bets: readonly Bet[];
    results: readonly BetResult[];
    updates: readonly BetUpdateRow[];
    state: CursorState;
    network: NetworkEntry;
    pruneBelow: bigint;
    events: number;
  }): Promise<number> {
    const chainId = BigInt(input.chainId);
    const { bets, claimed } = claimWritten(input.bets, input.results, input.state.finalizedBlock);
    return this.prisma.$transaction(async (tx) => {
      await lockCursor(tx, input.chainId, input.from);
      // Before the bets: no bet is ever visible without its token.
      if (input.tokens?.length) await tx.token.createMany({ data: [...input.tokens], skipDuplicates: true });
      await upsertBets(tx, bets);
      await insertResults(tx, input.results);
      if (input.blocks.length > 0) {
        const doc = JSON.stringify(input.blocks.map((b) => ({ n: big(b.number), h: b.hash })));
        await tx.$executeRaw`
          INSERT INTO "IndexedBlock" ("chainId", "number", "hash")
          SELECT ${chainId}::bigint, (e->>'n')::bigint, e->>'h' FROM jsonb_array_elements(${doc}::jsonb) AS r(e)`;
      }
      await tx.$executeRaw`DELETE FROM "IndexedBlock" WHERE "chainId" = ${chainId} AND "number" < ${input.pruneBelow}`;
      const { headBlock, finalizedBlock, isReady } = input.state;
      // A settled proof failing under the served key: the key or the verifier is wrong (schema.prisma).
      const rejected = input.results.filter((r) => !r.verified).length;
      await tx.$executeRaw`
        UPDATE "IndexingCursor" SET "indexedBlock" = ${input.to.number}, "indexedBlockHash" = ${input.to.hash}, "headBlock" = ${headBlock},
          "finalizedBlock" = ${finalizedBlock}, "isReady" = ${isReady}, "updatedAt" = ${UTC_NOW}, "rejectedProofs" = "rejectedProofs" + ${rejected}::int
        WHERE "chainId" = ${chainId}`;
      // After the bets' upsert: a settlement committed in an already final block is announced now.
      const finalized = await finalizeBets(tx, input.chainId, input.state.finalizedBlock, input.network, { claimed });
      await appendBetUpdates(tx, [...input.updates, ...finalized]);
      await this.hooks.beforeCommit?.({ chainId: input.chainId, from: input.from, to: input.to, events: input.events });
      return finalized.length;
    }, TX_OPTIONS);
  }

  // ---------------------------------------------------------------------------------- rollback

  /**
   * Undoes everything above `ancestor` in one transaction: bets placed above it are deleted
   * (REMOVED update carrying their last state); bets settled or refunded above it go back to
   * PENDING, their result deleted (PLACED update carrying the pending bet); block rows above it are
   * deleted and the cursor moves to it. Returns the ids removed and reverted. Set-wise statements
   * only, as reset(): the affected bets (tens of thousands under a large `confirmations` or a deep
   * reorg on a dev chain) are never read into the process, and no statement has a parameter per bet
   * (reading them with `include: result` failed past 32 767 bets: indexer/rollback.db.test.ts).
   */
  async rollback(input: {
    chainId: number;
    from: BlockRef;
    ancestor: BlockRef;
    network: NetworkEntry;
    state: CursorState;
  }): Promise<{ removed: string[]; reverted: string[] }> {
    const chainId = BigInt(input.chainId);
    const above = input.ancestor.number;
    return this.prisma.$transaction(async (tx) => {
      await lockCursor(tx, input.chainId, input.from);
      await tx.$executeRaw`DELETE FROM "IndexedBlock" WHERE "chainId" = ${chainId} AND "number" > ${above}`;
      const { headBlock, finalizedBlock, isReady } = input.state;
      await tx.$executeRaw`
        UPDATE "IndexingCursor" SET "indexedBlock" = ${above}, "indexedBlockHash" = ${input.ancestor.hash}, "headBlock" = ${headBlock},
          "finalizedBlock" = ${finalizedBlock}, "isReady" = ${isReady}, "updatedAt" = ${UTC_NOW}
        WHERE "chainId" = ${chainId}`;
      // The updates are built from the bets as they are, so they are written before the bets change
      // and the outbox lock is held across those writes (as in reset()).
      const ids = await appendRollbackUpdates(tx, input.chainId, above, input.network);
      // The results of every affected bet first, in one statement: left to the foreign key's cascade,
      // each deleted bet's result went in a statement of its own, each firing the counters' statement
      // triggers on "BetResult" (17 s for 36 000 bets, against 0.5 s).
      await tx.$executeRaw`DELETE FROM "BetResult" WHERE "chainId" = ${chainId} AND "betId" IN (
        SELECT "betId" FROM "Bet" WHERE "chainId" = ${chainId} AND "lastChangeBlock" > ${above})`;
      // Bets placed above: deleted.
      await tx.$executeRaw`DELETE FROM "Bet" WHERE "chainId" = ${chainId} AND "lastChangeBlock" > ${above} AND "placedBlock" > ${above}`;
      // What is left above was placed at or below: back to PENDING (pendingBet's columns).
      await tx.$executeRaw`
        UPDATE "Bet" SET status = 'PENDING', "settledBlock" = NULL, "settledBlockHash" = NULL, "settledTx" = NULL, "settledAt" = NULL,
          "refundedBlock" = NULL, "refundedBlockHash" = NULL, "refundedTx" = NULL, "refundedAt" = NULL,
          "lastChangeBlock" = "placedBlock", "finalizedUpdateBlock" = NULL
        WHERE "chainId" = ${chainId} AND "lastChangeBlock" > ${above}`;
      return ids;
    }, TX_OPTIONS);
  }

  /**
   * Forgets everything indexed for a network (a new deployment, or a dev chain that restarted):
   * every bet gets a REMOVED update, then bets, results, block rows and the rows of tokens other
   * than the native coin are deleted and the cursor goes back to block `start` (hash "" until
   * re-anchored). Set-wise statements only: a network may hold millions of bets, which are never
   * read into the process (issue 21: reading them, and one bind parameter per bet, never completed).
   */
  async reset(chainId: number, start: bigint, network: NetworkEntry): Promise<number> {
    const id = BigInt(chainId);
    // Its own bound, growing with the network: every bet is written to the outbox and deleted in this
    // one transaction. 1 M bets (80 % settled, each REMOVED row with its proof) took 127 s on a loaded
    // 2-core host, and another run outlasted TX_OPTIONS' 120 s (1 M with 20 % settled: 57 s). 1 ms a
    // bet on top is several times that pace. The count is the trigger-kept "BetCount": no rows counted.
    const [count] = await this.prisma.$queryRaw<{ bets: bigint }[]>`
      SELECT COALESCE(sum(bets), 0)::bigint AS bets FROM "BetCount" WHERE "chainId" = ${id}`;
    const options = { ...TX_OPTIONS, timeout: TX_OPTIONS.timeout + Number(count?.bets ?? 0n) };
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`DELETE FROM "IndexedBlock" WHERE "chainId" = ${id}`;
      // Another chain may hold other contracts at the same addresses: read them again (the native coin's row stays).
      await tx.$executeRaw`DELETE FROM "Token" WHERE "chainId" = ${id} AND address <> ${NATIVE}`;
      // `resets` keys the gateway's response cache: answers cached from the old data become unreachable.
      await tx.$executeRaw`
        UPDATE "IndexingCursor" SET "indexedBlock" = ${start}, "indexedBlockHash" = '', "isReady" = false, "updatedAt" = ${UTC_NOW},
          resets = resets + 1, "rejectedProofs" = 0
        WHERE "chainId" = ${id}`;
      // The REMOVED rows are built from the bets, so they are written before the bets are deleted
      // and the outbox lock is held across those deletes (the rest is done before it).
      const removed = await appendRemovedUpdates(tx, chainId, network);
      await tx.$executeRaw`DELETE FROM "BetResult" WHERE "chainId" = ${id}`;
      await tx.$executeRaw`DELETE FROM "Bet" WHERE "chainId" = ${id}`;
      return removed;
    }, options);
  }
}

function emptyEntry(network: NetworkConfig): NetworkEntry {
  return { chainId: network.chainId, name: network.name, confirmations: network.confirmations, headBlock: null, finalizedBlock: null };
}

type CursorRow = { indexedBlock: bigint; indexedBlockHash: string; headBlock: bigint; finalizedBlock: bigint };
const CURSOR_COLUMNS = Prisma.sql`"indexedBlock", "indexedBlockHash", "headBlock", "finalizedBlock"`;

function toStoredCursor(row: CursorRow): StoredCursor {
  return { number: row.indexedBlock, hash: row.indexedBlockHash as Hex | "", headBlock: row.headBlock, finalizedBlock: row.finalizedBlock };
}

/** Locks the cursor row and checks it is still at `expected`. */
async function lockCursor(tx: Tx, chainId: number, expected: { number: bigint; hash: string }): Promise<void> {
  const rows = await tx.$queryRaw<{ indexedBlock: bigint; indexedBlockHash: string }[]>`
    SELECT "indexedBlock", "indexedBlockHash" FROM "IndexingCursor" WHERE "chainId" = ${BigInt(chainId)} FOR UPDATE`;
  const row = rows[0];
  if (!row) throw new IndexerInvariantError(`no cursor for chain ${chainId}`);
  if (BigInt(row.indexedBlock) !== expected.number || row.indexedBlockHash !== expected.hash) {
    throw new CursorConflictError(`the cursor of chain ${chainId} moved`, {
      chainId,
      details: `expected ${expected.number} ${expected.hash}, found ${row.indexedBlock} ${row.indexedBlockHash}`,
    });
  }
}

// Bulk writes send their rows as ONE jsonb document per statement (an array of objects, expanded
// with jsonb_array_elements): one parameter and one parse for thousands of rows, as the outbox's
// own insert does (core/outbox.ts, where the measurements are).
const CHUNK = 5_000;
const dec = (v: Prisma.Decimal | Prisma.DecimalJsLike | number | string) => (typeof v === "object" ? v.toFixed(0) : String(v));
const big = (v: bigint | number | null) => (v === null ? null : v.toString(10));

async function insertResults(tx: Tx, results: readonly BetResult[]): Promise<void> {
  for (let i = 0; i < results.length; i += CHUNK) {
    const doc = JSON.stringify(
      results.slice(i, i + CHUNK).map((r) => ({
        c: big(r.chainId),
        b: dec(r.betId),
        o: dec(r.outcome),
        w: r.won,
        p: dec(r.payout),
        pr: r.proof,
        ps: r.publicSignals,
        sc: r.solidityCalldata,
        v: r.verified,
      })),
    );
    await tx.$executeRaw`
      INSERT INTO "BetResult" ("chainId", "betId", "outcome", "won", "payout", "proof", "publicSignals", "solidityCalldata", "verified")
      SELECT (e->>'c')::bigint, (e->>'b')::numeric, (e->>'o')::numeric, (e->>'w')::boolean, (e->>'p')::numeric, e->'pr',
        ARRAY(SELECT jsonb_array_elements_text(e->'ps')), e->>'sc', (e->>'v')::boolean
      FROM jsonb_array_elements(${doc}::jsonb) AS r(e)`;
  }
}

/** Inserts or overwrites bets (every non-key column replaced on conflict, the marker with them: see claimWritten). */
async function upsertBets(tx: Tx, bets: readonly Bet[]): Promise<void> {
  for (let i = 0; i < bets.length; i += CHUNK) {
    const doc = JSON.stringify(
      bets.slice(i, i + CHUNK).map((b) => ({
        c: big(b.chainId),
        id: dec(b.betId),
        pl: b.player,
        tk: b.token,
        st: dec(b.stake),
        g: b.game,
        cs: b.clientSeed,
        sh: b.serverSeedHash,
        s: b.status,
        pb: big(b.placedBlock),
        pi: b.placedLogIndex,
        ph: b.placedBlockHash,
        pt: b.placedTx,
        pa: big(b.placedAt),
        sb: big(b.settledBlock),
        shh: b.settledBlockHash,
        stx: b.settledTx,
        sa: big(b.settledAt),
        rb: big(b.refundedBlock),
        rh: b.refundedBlockHash,
        rt: b.refundedTx,
        ra: big(b.refundedAt),
        lc: big(b.lastChangeBlock),
        fu: big(b.finalizedUpdateBlock),
      })),
    );
    await tx.$executeRaw`
      INSERT INTO "Bet" ("chainId", "betId", "player", "token", "stake", "game", "clientSeed", "serverSeedHash", "status",
        "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt",
        "settledBlock", "settledBlockHash", "settledTx", "settledAt",
        "refundedBlock", "refundedBlockHash", "refundedTx", "refundedAt", "lastChangeBlock", "finalizedUpdateBlock")
      SELECT (e->>'c')::bigint, (e->>'id')::numeric, e->>'pl', e->>'tk', (e->>'st')::numeric, e->>'g', e->>'cs', e->>'sh', (e->>'s')::"BetStatus",
        (e->>'pb')::bigint, (e->>'pi')::int, e->>'ph', e->>'pt', (e->>'pa')::bigint,
        (e->>'sb')::bigint, e->>'shh', e->>'stx', (e->>'sa')::bigint,
        (e->>'rb')::bigint, e->>'rh', e->>'rt', (e->>'ra')::bigint, (e->>'lc')::bigint, (e->>'fu')::bigint
      FROM jsonb_array_elements(${doc}::jsonb) AS r(e)
      ON CONFLICT ("chainId", "betId") DO UPDATE SET
        "player" = EXCLUDED."player", "token" = EXCLUDED."token", "stake" = EXCLUDED."stake", "game" = EXCLUDED."game",
        "clientSeed" = EXCLUDED."clientSeed", "serverSeedHash" = EXCLUDED."serverSeedHash", "status" = EXCLUDED."status",
        "placedBlock" = EXCLUDED."placedBlock", "placedLogIndex" = EXCLUDED."placedLogIndex", "placedBlockHash" = EXCLUDED."placedBlockHash",
        "placedTx" = EXCLUDED."placedTx", "placedAt" = EXCLUDED."placedAt",
        "settledBlock" = EXCLUDED."settledBlock", "settledBlockHash" = EXCLUDED."settledBlockHash", "settledTx" = EXCLUDED."settledTx",
        "settledAt" = EXCLUDED."settledAt",
        "refundedBlock" = EXCLUDED."refundedBlock", "refundedBlockHash" = EXCLUDED."refundedBlockHash", "refundedTx" = EXCLUDED."refundedTx",
        "refundedAt" = EXCLUDED."refundedAt", "lastChangeBlock" = EXCLUDED."lastChangeBlock",
        "finalizedUpdateBlock" = EXCLUDED."finalizedUpdateBlock"`;
  }
}
