import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { testConfig } from "../test/config.ts";
import { emptyTarget, migrationsDirOf } from "../test/migration-targets.ts";
import { readMigrations } from "./migrate.ts";

// BetResult_proof_numbers_canonical (migrations *_result_proof_numbers_checked and
// *_result_proof_numbers_validated), on both database kinds.

describe(`stored proof numbers (${testConfig.TEST_DB})`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  // The subgraphs serve a stored proof's numbers and public signals as read (kit/executor.ts
  // storeCheckedLists): the database keeps none that is not a canonical decimal string.
  it("refuses a result whose proof numbers or public signals are not canonical decimal strings", async () => {
    await db.prisma.$executeRawUnsafe(`INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256")
      VALUES (2, 'proofs', 1, '{}', '00')`);
    await db.prisma.$executeRawUnsafe(`
      INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                         "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
      SELECT 2, i, 'p', '0x0', 1, 'dice', 'c', 's', 'SETTLED', i, 0, 'h', 't', i, i FROM generate_series(1, 40) AS i`);
    let betId = 0;
    const insert = (proof: unknown, publicSignals: unknown[]) =>
      db.prisma.$executeRawUnsafe(
        `INSERT INTO "BetResult" ("chainId", "betId", outcome, won, payout, proof, "publicSignals", "solidityCalldata", verified)
         VALUES (2, $1, 1, true, 1, $2::jsonb, ARRAY(SELECT jsonb_array_elements_text($3::jsonb)), '', false)`,
        ++betId,
        JSON.stringify(proof),
        JSON.stringify(publicSignals),
      );
    const max = "9".repeat(78);
    const proof = (numbers: Partial<Record<"pi_a" | "pi_b" | "pi_c", unknown>>) => ({
      pi_a: ["1", "2", "1"],
      pi_b: [
        ["3", "4"],
        ["5", "6"],
        ["1", "0"],
      ],
      pi_c: ["0", max, "1"],
      protocol: "groth16",
      curve: "bn128",
      ...numbers,
    });
    // Kept: canonical decimals of any length (2^256-1 is held by UInt256 when served), no signals, and a proof with no lists at all.
    const kept: [unknown, unknown[]][] = [
      [proof({}), ["0", "7", max]],
      [proof({ pi_a: ["1", `1${max}`, "1"] }), [`1${max}`]],
      [proof({}), []],
      [{}, []],
    ];
    for (const [p, signals] of kept) await insert(p, signals);
    // Refused: each list in turn given a number that is not one.
    const refused: [unknown, unknown[]][] = [
      ...["01", "-1", "1e5", " 1", "", "0x1", "1.0", '1"'].map((n): [unknown, unknown[]] => [proof({ pi_a: ["1", n, "1"] }), ["1"]]),
      [proof({ pi_a: [1, "2", "1"] }), ["1"]],
      [proof({ pi_a: "7" }), ["1"]],
      [proof({ pi_c: ["1", ["2"], "1"] }), ["1"]],
      [proof({ pi_b: ["3", "4"] }), ["1"]],
      [
        proof({
          pi_b: [
            ["3", "4"],
            ["5", "x"],
            ["1", "0"],
          ],
        }),
        ["1"],
      ],
      [proof({ pi_c: ["0", "007", "1"] }), ["1"]],
      [proof({}), ["1", "02"]],
      [proof({}), [""]],
      [proof({}), ["1", null]],
      [proof({}), ["1,2"]],
    ];
    for (const [p, signals] of refused) {
      await expect(insert(p, signals), JSON.stringify([p, signals])).rejects.toThrow(/BetResult_proof_numbers_canonical/);
    }
    const [stored] = await db.prisma.$queryRaw<[{ n: number }]>`SELECT count(*)::int AS n FROM "BetResult" WHERE "chainId" = 2`;
    expect(stored.n).toBe(kept.length);
  });

  it("fails the validating migration, naming the constraint, over a row written before it that breaks it", async () => {
    const migrations = readMigrations();
    const checked = migrations.findIndex((m) => m.name.endsWith("_result_proof_numbers_checked"));
    expect(migrations[checked + 1]?.name).toMatch(/_result_proof_numbers_validated$/);
    const dir = migrationsDirOf(migrations.slice(0, checked));
    const target = await emptyTarget();
    try {
      await target.migrate({ migrationsDir: dir });
      await target.query(
        `INSERT INTO "Network" ("chainId", name, confirmations, "verificationKeyJson", "verificationKeySha256") VALUES (1, 'one', 1, '{}', '00')`,
      );
      await target.query(`INSERT INTO "Bet" ("chainId", "betId", player, token, stake, game, "clientSeed", "serverSeedHash", status,
                     "placedBlock", "placedLogIndex", "placedBlockHash", "placedTx", "placedAt", "lastChangeBlock")
                   VALUES (1, 1, 'p', '0x0', 1, 'dice', 'c', 's', 'SETTLED', 1, 0, 'h', 't', 1, 1)`);
      await target.query(`INSERT INTO "BetResult" ("chainId", "betId", outcome, won, payout, proof, "publicSignals", "solidityCalldata", verified)
                   VALUES (1, 1, 1, true, 1, '{"pi_a": ["1", "02", "1"]}', '{1}', '', false)`);
      await expect(target.migrate()).rejects.toThrow(
        /result_proof_numbers_validated[\s\S]*BetResult_proof_numbers_canonical|BetResult_proof_numbers_canonical[\s\S]*result_proof_numbers_validated/,
      );
    } finally {
      await target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
