import type { Bet, BetResult } from "../prisma/generated/client.ts";
import type { SnarkjsProof } from "../zk/proof-shape.ts";
import { betDepth, type NetworkEntry } from "./networks.ts";
import { formatUInt256 } from "./scalars.ts";

// The GraphQL `Bet` as plain JSON, for payloads that do not pass through GraphQL (the outbox and
// Socket.IO updates): the same field names, and the same conventions the scalars enforce.

export interface Groth16ProofJson {
  protocol: string;
  curve: string;
  piA: string[];
  piB: string[][];
  piC: string[];
  publicSignals: string[];
  solidityCalldata: string;
  verified: boolean;
}

export interface BetResultJson {
  outcome: string;
  won: boolean;
  payout: string;
  proof: Groth16ProofJson;
}

export interface BetJson {
  chainId: number;
  betId: string;
  player: string;
  token: string;
  stake: string;
  game: string;
  clientSeed: string;
  serverSeedHash: string;
  status: Bet["status"];
  placedBlock: string;
  placedTx: string;
  placedAt: string;
  settledBlock: string | null;
  settledTx: string | null;
  settledAt: string | null;
  refundedBlock: string | null;
  refundedTx: string | null;
  refundedAt: string | null;
  confirmations: string;
  finalized: boolean;
  result: BetResultJson | null;
}

const optional = (value: bigint | null) => (value === null ? null : formatUInt256(value));

export function betResultToJson(result: BetResult): BetResultJson {
  const proof = result.proof as unknown as SnarkjsProof;
  return {
    outcome: formatUInt256(result.outcome),
    won: result.won,
    payout: formatUInt256(result.payout),
    proof: {
      protocol: proof.protocol,
      curve: proof.curve,
      piA: proof.pi_a,
      piB: proof.pi_b,
      piC: proof.pi_c,
      publicSignals: result.publicSignals,
      solidityCalldata: result.solidityCalldata,
      verified: result.verified,
    },
  };
}

export function betToJson(bet: Bet, result: BetResult | null, network: NetworkEntry | undefined): BetJson {
  const depth = betDepth(bet.lastChangeBlock, network);
  return {
    chainId: Number(bet.chainId),
    betId: formatUInt256(bet.betId),
    player: bet.player,
    token: bet.token,
    stake: formatUInt256(bet.stake),
    game: bet.game,
    clientSeed: bet.clientSeed,
    serverSeedHash: bet.serverSeedHash,
    status: bet.status,
    placedBlock: formatUInt256(bet.placedBlock),
    placedTx: bet.placedTx,
    placedAt: formatUInt256(bet.placedAt),
    settledBlock: optional(bet.settledBlock),
    settledTx: bet.settledTx,
    settledAt: optional(bet.settledAt),
    refundedBlock: optional(bet.refundedBlock),
    refundedTx: bet.refundedTx,
    refundedAt: optional(bet.refundedAt),
    confirmations: formatUInt256(depth.confirmations),
    finalized: depth.finalized,
    result: result && bet.status === "SETTLED" ? betResultToJson(result) : null,
  };
}
