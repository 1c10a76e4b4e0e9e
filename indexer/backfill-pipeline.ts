/**
 * The backfill's proof pipeline (indexer/sync.ts): a range's events are cut into commit groups of
 * whole blocks, and every group's settlements go to the verifier (the worker pool, which queues
 * them in order) as soon as the range is decoded, so the next groups are verified while the
 * current one is written. A commit writes its bets (which no verdict changes) while its own
 * group's proofs are still being verified, and awaits the verdicts only for the results and the
 * outbox rows (applyWhileVerifying, IndexerStore.commit's `final`).
 */
import type { Bet } from "../prisma/generated/client.ts";
import { type AppliedBatch, type ApplyInput, applyEvents, betIdKey, settlementInputs, settlementKey } from "./apply.ts";
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

/**
 * A commit's batch applied: `draft` at once (its bets final, its results without proofs, no outbox
 * rows) and `final` once the proofs are verified (`verifying`, from verifyGroupsAhead: the verdicts
 * ahead cover exactly these settlements; anything else, none expected, is verified now). Without
 * settlements, verdicts pending, or `overlap` (a verifier that checks nothing: its verdicts take no
 * time), both are the batch applied with its proofs.
 */
export async function applyWhileVerifying(
  input: Omit<ApplyInput, "proofs" | "draft">,
  verifying: Promise<Map<string, SettlementProof>> | undefined,
  verify: (inputs: Inputs) => Promise<Map<string, SettlementProof>>,
  overlap = true,
): Promise<{ draft: AppliedBatch; final: Promise<AppliedBatch> }> {
  const inputs = settlementInputs(input.events, input.existing);
  const proofs = async () => {
    const ahead = await verifying;
    return ahead && inputs.every(({ event }) => ahead.has(settlementKey(event))) ? ahead : verify(inputs);
  };
  if (!verifying || !overlap || inputs.length === 0) {
    const applied = applyEvents({ ...input, proofs: await proofs() });
    return { draft: applied, final: Promise.resolve(applied) };
  }
  const draft = applyEvents({ ...input, proofs: new Map(), draft: true });
  const final = proofs().then((done) => applyEvents({ ...input, proofs: done }));
  final.catch(() => undefined); // awaited inside the commit; a commit failing before it leaves it unawaited
  return { draft, final };
}
