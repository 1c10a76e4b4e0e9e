// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// TEST AND DEMO ONLY (compiled by test/contracts.ts and chain/permissive-verifier.ts for npm start's
/// local chain 1337, never deployed anywhere real): a Groth16
/// "verifier" that accepts every proof. A BetVault deployed against it settles bets with any proof,
/// tampered or fake: the indexer's tests check that its own verification then says
/// `verified: false`, and the indexer benchmark settles thousands of bets without proving.
contract PermissiveVerifier {
    function verifyProof(
        uint256[2] calldata,
        uint256[2][2] calldata,
        uint256[2] calldata,
        uint256[4] calldata
    ) external pure returns (bool) {
        return true;
    }
}
