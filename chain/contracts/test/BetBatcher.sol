// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

interface IBetVaultForBatcher {
    function placeBet(string calldata game, bytes32 clientSeed, bytes32 expectedServerSeedHash) external payable returns (uint256);
    function settleBet(uint256 betId, uint256 outcome, uint256[2] calldata pA, uint256[2][2] calldata pB, uint256[2] calldata pC) external;
    function refundBet(uint256 betId) external;
}

/// TEST/BENCH ONLY (compiled by test/contracts.ts): places, settles and refunds many bets of
/// one BetVault in a single transaction, so a benchmark can create tens of thousands of events in
/// a few blocks. The batcher itself is the player of every bet it places (it accepts payouts).
contract BetBatcher {
    IBetVaultForBatcher public immutable vault;

    constructor(IBetVaultForBatcher vault_) {
        vault = vault_;
    }

    /// Places `count` bets of `stake` wei each (msg.value must be count * stake); client seeds are
    /// keccak256(abi.encode(seedBase, i)).
    function placeMany(string calldata game, uint256 count, uint256 stake, bytes32 seedBase) external payable {
        require(msg.value == count * stake, "value");
        for (uint256 i = 0; i < count; ++i) {
            vault.placeBet{value: stake}(game, keccak256(abi.encode(seedBase, i)), bytes32(0));
        }
    }

    /// Settles each bet with the same proof (only a permissive verifier accepts that).
    function settleMany(
        uint256[] calldata betIds,
        uint256[] calldata outcomes,
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC
    ) external {
        require(betIds.length == outcomes.length, "length");
        for (uint256 i = 0; i < betIds.length; ++i) {
            vault.settleBet(betIds[i], outcomes[i], pA, pB, pC);
        }
    }

    function refundMany(uint256[] calldata betIds) external {
        for (uint256 i = 0; i < betIds.length; ++i) {
            vault.refundBet(betIds[i]);
        }
    }

    receive() external payable {}
}
