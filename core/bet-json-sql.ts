// The GraphQL `Bet` as JSON (core/bet-json.ts betToJson), built by PostgreSQL for statements that
// write one payload per row without reading the rows into the process: a network reset's REMOVED
// update per bet (core/outbox.ts appendRemovedUpdates), up to millions of them. Equal documents,
// key for key and value for value: indexer/reset.db.test.ts compares the stored text of both.
import { Prisma } from "../prisma/generated/client.ts";
import { finalityBound } from "./finality.ts";
import type { NetworkEntry } from "./networks.ts";

// The proof's snarkjs keys under their GraphQL names (betResultToJson). A key the stored proof lacks
// is left out, as JSON.stringify leaves out an undefined property: `->` is NULL only for an absent key.
const PROOF_KEYS = [
  ["protocol", "protocol"],
  ["curve", "curve"],
  ["pi_a", "piA"],
  ["pi_b", "piB"],
  ["pi_c", "piC"],
] as const;
const PROOF_FIELDS = Prisma.raw(
  PROOF_KEYS.map(
    ([stored, served]) => `CASE WHEN r.proof -> '${stored}' IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('${served}', r.proof -> '${stored}') END`,
  ).join("\n      || "),
);

/**
 * betToJson(b, r, network) as a jsonb expression over `b`, a "Bet" row, and `r`, its "BetResult"
 * LEFT JOINed (all NULL when it has none). uint256 columns are numeric(78, 0) and block numbers
 * bigint: their text is formatUInt256's.
 */
export function betJsonSql(network: NetworkEntry): Prisma.Sql {
  // confirmationsAt and isFinal (core/finality.ts): GREATEST skips the NULL of an unknown head, and
  // finalityBound turns the rule into one comparison (-1 when the head is unknown: never final).
  const head = network.headBlock;
  const bound = finalityBound(network.headBlock, network.confirmations);
  return Prisma.sql`jsonb_build_object(
    'chainId', b."chainId", 'betId', b."betId"::text, 'player', b.player, 'token', b.token, 'stake', b.stake::text,
    'game', b.game, 'clientSeed', b."clientSeed", 'serverSeedHash', b."serverSeedHash", 'status', b.status::text,
    'placedBlock', b."placedBlock"::text, 'placedTx', b."placedTx", 'placedAt', b."placedAt"::text,
    'settledBlock', b."settledBlock"::text, 'settledTx', b."settledTx", 'settledAt', b."settledAt"::text,
    'refundedBlock', b."refundedBlock"::text, 'refundedTx', b."refundedTx", 'refundedAt', b."refundedAt"::text,
    'confirmations', GREATEST(${head}::bigint - b."lastChangeBlock" + 1, 0)::text,
    'finalized', b."lastChangeBlock" <= ${bound}::bigint,
    'result', CASE WHEN r."betId" IS NOT NULL AND b.status = 'SETTLED' THEN jsonb_build_object(
      'outcome', r.outcome::text, 'won', r.won, 'payout', r.payout::text,
      'proof', ${PROOF_FIELDS}
        || jsonb_build_object('publicSignals', to_jsonb(r."publicSignals"), 'solidityCalldata', r."solidityCalldata", 'verified', r.verified)) END)`;
}
