// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// TEST ONLY (compiled by test/contracts.ts, never deployed anywhere real): the metadata calls of
/// an ERC-20 token, well-behaved or not, for the indexer's token tests. `symbol()` is answered by
/// the fallback so that one contract can return it as an ABI string (kind 0), as a bytes32 like
/// early tokens such as MKR (kind 1), or revert (kind 2); kind 3 reverts `decimals()`.
contract TestToken {
    string internal sym;
    uint8 internal dec;
    uint8 internal kind;

    constructor(string memory symbol_, uint8 decimals_, uint8 kind_) {
        sym = symbol_;
        dec = decimals_;
        kind = kind_;
    }

    function decimals() external view returns (uint8) {
        require(kind != 3, "no decimals");
        return dec;
    }

    fallback(bytes calldata data) external returns (bytes memory) {
        require(data.length >= 4 && bytes4(data[0:4]) == bytes4(keccak256("symbol()")), "unknown call");
        require(kind != 2, "no symbol");
        if (kind == 1) return abi.encode(bytes32(bytes(sym)));
        return abi.encode(sym);
    }
}
