// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// TEST ONLY (compiled by test/contracts.ts, never deployed anywhere real): emits BetVault's
/// BetPlaced event with any token, so the indexer can be pointed at it (as the network's BetVault)
/// to index bets in ERC-20 tokens, which BetVault itself (native coin only) never emits.
contract BetEmitter {
    event BetPlaced(
        uint256 indexed betId,
        address indexed player,
        address token,
        uint256 stake,
        string game,
        bytes32 clientSeed,
        bytes32 serverSeedHash,
        uint64 deadline
    );

    uint256 public nextBetId = 1;

    function place(address token, uint256 stake) external {
        uint256 betId = nextBetId++;
        emit BetPlaced(betId, msg.sender, token, stake, "dice", bytes32(betId), bytes32(uint256(1)), uint64(block.timestamp + 600));
    }
}
