// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// TEST ONLY (compiled by chain/betvault.test.ts, not deployed anywhere): a contract player whose
/// receive() accepts, rejects, or tries to re-enter the vault, to exercise deferred payouts.
interface IBetVaultForTest {
    function placeBet(string calldata game, bytes32 clientSeed, bytes32 expectedServerSeedHash) external payable returns (uint256);
    function claimCredit() external;
}

contract TestPlayer {
    enum Mode {
        Accept,
        Reject,
        Reenter
    }

    IBetVaultForTest public immutable vault;
    Mode public mode;

    constructor(IBetVaultForTest vault_) {
        vault = vault_;
    }

    function setMode(Mode m) external {
        mode = m;
    }

    function place(string calldata game, bytes32 clientSeed) external payable returns (uint256) {
        return vault.placeBet{value: msg.value}(game, clientSeed, bytes32(0));
    }

    function claim() external {
        vault.claimCredit();
    }

    receive() external payable {
        if (mode == Mode.Reject) revert("rejected");
        if (mode == Mode.Reenter) vault.claimCredit(); // must fail: the vault is locked
    }
}
