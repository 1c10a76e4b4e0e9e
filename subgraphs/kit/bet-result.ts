import type { GraphQLResolveInfo } from "graphql";
import type { NetworkDirectory, NetworkEntry } from "../../core/networks.ts";
import type { SnarkjsProof } from "../../zk/proof-shape.ts";
import { betMaxAgeAt, cacheFor } from "./cache-hints.ts";

// A bet's result as the API serves it (`Bet.result`), the one owner of how a "BetResult" row
// becomes one and of the hint it gives: the results subgraph serves it, and the history subgraph
// serves the same field from the result rows it joins to its pages (a wallet page in one hop).
// Both read the row through these columns and shape it here, so their answers cannot drift apart.

/**
 * A `BetResult` row as the results query reads it: uint256 columns cast to text in SQL, so no
 * driver or JSON step can turn them into floating point on the way.
 */
export interface BetResultModel {
  outcome: string;
  won: boolean;
  payout: string;
  proof: Groth16ProofModel;
}

/**
 * A `Groth16Proof` in the API's layout, shaped once when its row is read: every field is served as
 * it stands (no resolver per field: 100 proofs are ~1 000 fields per answer).
 */
export interface Groth16ProofModel {
  protocol: SnarkjsProof["protocol"];
  curve: SnarkjsProof["curve"];
  piA: SnarkjsProof["pi_a"];
  /** piB and piC: absent when the statement did not read them (resultColumns `wholeProofWhen`: the operation cannot select them). */
  piB?: SnarkjsProof["pi_b"];
  piC?: SnarkjsProof["pi_c"];
  publicSignals: string[];
  /** Absent when the statement did not read it (results/data.ts ResultReads: the operation cannot select it). */
  solidityCalldata?: string;
  verified: boolean;
}

/**
 * The Groth16Proof lists served as read (kit/executor.ts storeCheckedLists): the database refuses a
 * proof number or public signal that is not a canonical decimal when the row is written (migration
 * `*_result_proof_numbers_checked`), and every Groth16Proof either subgraph serves is such a row.
 */
export const STORE_CHECKED_LISTS: ReadonlySet<string> = new Set(["Groth16Proof.piA", "Groth16Proof.piB", "Groth16Proof.piC", "Groth16Proof.publicSignals"]);

interface ReadResult {
  outcome: string;
  won: boolean;
  payout: string;
  /** Without pi_b and pi_c when not read (`wholeProofWhen` false). */
  proof: Omit<SnarkjsProof, "pi_b" | "pi_c"> & Partial<Pick<SnarkjsProof, "pi_b" | "pi_c">>;
  publicSignals: string[];
  /** Null when not read (`calldataWhen` false). */
  solidityCalldata: string | null;
  verified: boolean;
}

/** The columns `resultColumns` reads, as the driver returns them: every one null when the bet has no result row (LEFT JOIN). */
export type ResultColumns = ReadResult | { [column in keyof ReadResult]: null };

/**
 * The select list of a "BetResult" row under the alias `table`, named as ResultColumns. publicSignals
 * as JSON, which V8 parses natively, not as a text[] the driver parses in JS. `calldataWhen`: an SQL
 * boolean under which `solidityCalldata` is read (~850 bytes a row; null otherwise); unset: always.
 * `wholeProofWhen`: an SQL boolean under which the whole proof is read; otherwise its pi_a, protocol
 * and curve only (pi_b and pi_c are 9 of its 12 numbers, ~700 bytes a row sent, decoded and parsed
 * for a wallet page that shows piA); unset: always whole.
 */
export function resultColumns(table: string, calldataWhen?: string, wholeProofWhen?: string): string {
  const calldata = calldataWhen ? `CASE WHEN ${calldataWhen} THEN ${table}."solidityCalldata" END` : `${table}."solidityCalldata"`;
  const proof = `${table}."proof"`;
  const proofColumn = wholeProofWhen
    ? `CASE WHEN ${wholeProofWhen} OR ${proof} IS NULL THEN ${proof} ELSE jsonb_build_object('protocol', ${proof}->'protocol', 'curve', ${proof}->'curve', 'pi_a', ${proof}->'pi_a') END AS "proof"`
    : proof;
  return `${table}."outcome"::text AS outcome, ${table}."won", ${table}."payout"::text AS payout, ${proofColumn},
    to_json(${table}."publicSignals") AS "publicSignals", ${calldata} AS "solidityCalldata", ${table}."verified"`;
}

/** The result of a row read with resultColumns: null when the bet has none (not settled). */
export function betResultOf(row: ResultColumns): BetResultModel | null {
  if (row.won === null) return null;
  return {
    outcome: row.outcome,
    won: row.won,
    payout: row.payout,
    proof: {
      protocol: row.proof.protocol,
      curve: row.proof.curve,
      piA: row.proof.pi_a,
      ...(row.proof.pi_b === undefined ? {} : { piB: row.proof.pi_b }),
      ...(row.proof.pi_c === undefined ? {} : { piC: row.proof.pi_c }),
      publicSignals: row.publicSignals,
      ...(row.solidityCalldata === null ? {} : { solidityCalldata: row.solidityCalldata }),
      verified: row.verified,
    },
  };
}

/** What a result's hint is measured on: the bet's network and how final its latest change is. */
export interface ResultOwner {
  chainId: number | bigint;
  lastChangeBlock: bigint;
  status: string;
}

/**
 * `Bet.result`'s answer: `result`, hinted as final as the bet's latest change (kit/cache-hints.ts
 * betMaxAgeAt). With no promise while the network snapshot is fresh (a page of 50 or 100 bets);
 * else once the snapshot is, never by a second read.
 */
export function hintedResult(
  info: GraphQLResolveInfo,
  networks: NetworkDirectory,
  bet: ResultOwner,
  result: BetResultModel | null,
): BetResultModel | null | Promise<BetResultModel | null> {
  const answer = (snapshot: Map<number, NetworkEntry>) => {
    cacheFor(info, betMaxAgeAt(snapshot.get(Number(bet.chainId)), bet));
    return result;
  };
  const snapshot = networks.fresh();
  return snapshot ? answer(snapshot) : networks.all().then(answer);
}
