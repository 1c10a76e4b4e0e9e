pragma circom 2.1.0;

// Provably fair bet outcome.
//
// The house commits to a secret `serverSeed` by publishing
//     serverSeedHash = Poseidon(serverSeed)
// before the bet is placed. Once the bet exists (its `betId` and the player's `clientSeed` are
// on-chain), the house proves, without revealing the seed, that
//     outcome = Poseidon(serverSeed, betId, clientSeed)
// was computed from the seed behind that commitment.
//
// Every signal is an element of the BN254 scalar field
//     p = 21888242871839275222246405745257275088548364400416034343698204186575808495617
// Off-circuit mapping rules (applied identically by zk/groth16.ts and by the Solidity contract):
//   - serverSeedHash: the bytes32 commitment read as uint256; always < p because it is a Poseidon
//     output.
//   - betId:          the uint256 bet id itself; it MUST be < p (the contract must refuse larger
//                     ids; the witness generator would otherwise silently reduce it modulo p).
//   - clientSeed:     uint256(bytes32 clientSeed) % p.
//   - serverSeed:     private; 0 <= serverSeed < p.
//
// publicSignals order (snarkjs / the Solidity verifier's `_pubSignals`): outputs first, then the
// public inputs in declaration order:
//     [0] outcome  [1] serverSeedHash  [2] betId  [3] clientSeed

include "circomlib/circuits/poseidon.circom";

template BetOutcome() {
    // Public inputs (declared in publicSignals order; `main` marks them public).
    signal input serverSeedHash;
    signal input betId;
    signal input clientSeed;

    // Private input.
    signal input serverSeed;

    signal output outcome;

    // The seed must open the published commitment.
    component commitment = Poseidon(1);
    commitment.inputs[0] <== serverSeed;
    serverSeedHash === commitment.out;

    // The outcome is bound to the seed, the bet and the player's seed.
    component mix = Poseidon(3);
    mix.inputs[0] <== serverSeed;
    mix.inputs[1] <== betId;
    mix.inputs[2] <== clientSeed;
    outcome <== mix.out;
}

component main {public [serverSeedHash, betId, clientSeed]} = BetOutcome();
