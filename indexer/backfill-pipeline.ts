/**
 * The backfill's proof pipeline (indexer/sync.ts): a range's events are cut into commit groups of
 * whole blocks, and every group's settlements go to the verifier (the worker pool, which queues
 * them in order) as soon as the range is decoded, so the next groups are verified while the
 * current one is written. Each commit still awaits its own group's verdicts before writing.
 */
import type { Bet } from "../prisma/generated/client.ts";
import { betIdKey, settlementInputs, settlementKey } from "./apply.ts";
import type { BetEvent } from "./events.ts";
import { settlementProofs, type ProofVerifier, type SettlementProof } from "./proofs.ts";

type Inputs = ReturnType<typeof settlementInputs>;
type BetSeeds = Pick<Bet, "serverSeedHash" | "clientSeed">;

/**
 * [start, end) of each commit group: whole blocks, at most `maxEvents` events and `maxSettlements`
 * settlements (a single larger block still goes alone).
 */
export function commitGroups(events: readonly BetEvent[], limits: { maxEvents: number; maxSettlements: number }): [number, number][] {
  const groups: [number, number][] = [];
  let start = 0;
  while (start < events.length) {
    let end = start;
    let settlements = 0;
    while (end < events.length && end - start < limits.maxEvents && settlements < limits.maxSettlements) {
      if (events[end]?.kind === "BetSettled") settlements++;
      end++;
    }
    const lastBlock = events[end - 1]?.blockNumber;
    while (end < events.length && events[end]?.blockNumber === lastBlock) end++;
    groups.push([start, end]);
    start = end;
  }
  return groups;
}

/** The settlements' proofs, verified together (one batch per pool worker), by settlement key. */
export async function proofsByKey(inputs: Inputs, verifier: ProofVerifier): Promise<Map<string, SettlementProof>> {
  const done = await settlementProofs(inputs, verifier);
  return new Map(inputs.map(({ event }, i) => [settlementKey(event), done[i] as SettlementProof]));
}

/**
 * Starts verifying every group's settlements, in group order: one promise per group. A settled
 * bet is found among the earlier groups' BetPlaced events or in `known` (the bets placed before
 * the range). A group whose inputs cannot be built gets a rejected promise: its commit fails as
 * it would have without the pipeline (and builds the same inputs itself first).
 */
export function verifyGroupsAhead(
  groups: readonly (readonly BetEvent[])[],
  known: ReadonlyMap<string, BetSeeds>,
  verify: (inputs: Inputs) => Promise<Map<string, SettlementProof>>,
): Promise<Map<string, SettlementProof>>[] {
  const bets = new Map<string, BetSeeds>(known);
  return groups.map((group) => {
    let verifying: Promise<Map<string, SettlementProof>>;
    try {
      verifying = verify(settlementInputs(group, bets));
    } catch (error) {
      verifying = Promise.reject(error);
    }
    verifying.catch(() => undefined); // awaited by its commit; a failed earlier commit leaves it unawaited
    for (const e of group) if (e.kind === "BetPlaced") bets.set(betIdKey(e.betId), { serverSeedHash: e.serverSeedHash, clientSeed: e.clientSeed });
    return verifying;
  });
}
