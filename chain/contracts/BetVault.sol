// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice The snarkjs-exported Groth16 verifier of the bet-outcome circuit (zk/artifacts/Groth16Verifier.sol).
/// Public signals, in this order: [outcome, serverSeedHash, betId, clientSeedField].
/// It returns false (it does not revert) on a bad proof AND when it runs out of gas.
interface IGroth16Verifier {
    function verifyProof(
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC,
        uint256[4] calldata pubSignals
    ) external view returns (bool);
}

/// @title BetVault: provably fair bets in the native coin, settled with a Groth16 proof.
/// @notice Flow:
///  1. The operator publishes server-seed commitments (Poseidon(serverSeed), a BN254 field element)
///     in advance: `publishCommitments`. They form a FIFO queue.
///  2. A player calls `placeBet(game, clientSeed, expectedServerSeedHash)` with the stake as
///     msg.value. The bet takes the oldest unused commitment, which must have been published in an
///     EARLIER block (the operator cannot pick a seed after seeing the client seed). Bets and
///     commitments are consumed one-to-one, so bet id = commitment index + 1. A player who passes
///     the current queue head as `expectedServerSeedHash` pins both the seed and the bet id: if
///     anything else is mined first the bet reverts instead of landing on another (seed, betId)
///     pair. With bytes32(0) the bet takes whatever is next (no collisions between concurrent
///     players, but whoever can insert bets ahead of it, the operator included, chooses among the
///     queued pairs).
///  3. The operator proves outcome = Poseidon(serverSeed, betId, clientSeed mod p) for the committed
///     seed and calls `settleBet`; the contract builds the public signals itself from the stored bet,
///     requires the verifier to accept, derives won/payout from the game's fixed rule and pays.
///  4. A bet not settled by its deadline (block timestamp) can be refunded by anyone: `refundBet`
///     returns the stake to the player.
/// Game rules (fixed at deployment, never changeable): won = outcome % modulus < winBelow,
/// payout = won ? stake * multiplierBps / 10000 : 0.
///   coinflip: outcome % 2   == 0  pays 1.98x
///   dice:     outcome % 100 < 49  pays 2.00x
///   wheel:    outcome % 10  == 0  pays 9.80x
contract BetVault {
    /// BN254 scalar field order (the circuit's field): every public signal must be below it.
    uint256 public constant FIELD_SIZE =
        21888242871839275222246405745257275088548364400416034343698204186575808495617;
    uint256 public constant BPS = 10_000;
    /// Gas forwarded with a payout; a recipient that needs more (or rejects) gets a claimable credit.
    uint256 public constant PAYOUT_GAS = 50_000;

    enum Status {
        None,
        Pending,
        Settled,
        Refunded
    }

    struct Game {
        string name;
        uint64 modulus;
        uint64 winBelow;
        uint32 multiplierBps;
    }

    struct Bet {
        address player;
        uint64 deadline; // unix seconds: settle while block.timestamp <= deadline, refund after
        uint8 game; // index into games
        Status status;
        uint128 stake;
        bytes32 clientSeed;
        bytes32 serverSeedHash;
    }

    struct Commitment {
        bytes32 hash;
        uint64 publishedBlock;
    }

    IGroth16Verifier public immutable verifier;
    address public immutable operator;
    uint64 public immutable settleTimeout;

    Game[] internal games;
    mapping(bytes32 nameHash => uint256 indexPlusOne) internal gameIndex;

    Commitment[] public commitments;
    uint256 public nextCommitment; // index of the next commitment a bet will take
    mapping(bytes32 hash => bool) public commitmentKnown;

    mapping(uint256 betId => Bet) internal bets;
    uint256 public nextBetId = 1;

    uint256 public lockedPayout; // sum of the maximum payouts of pending bets
    uint256 public totalCredits; // payouts owed to recipients whose transfer failed
    mapping(address => uint256) public credits;

    bool internal transient locked;

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
    event BetSettled(
        uint256 indexed betId,
        address indexed player,
        uint256 outcome,
        bool won,
        uint256 payout,
        uint256[2] pA,
        uint256[2][2] pB,
        uint256[2] pC
    );
    event BetRefunded(uint256 indexed betId, address indexed player, uint256 amount);
    event CommitmentPublished(uint256 indexed index, bytes32 indexed serverSeedHash);
    event BankrollFunded(address indexed from, uint256 amount);
    event BankrollWithdrawn(address indexed to, uint256 amount);
    event PayoutDeferred(address indexed to, uint256 amount);
    event CreditClaimed(address indexed to, uint256 amount);

    error NotOperator();
    error Reentrancy();
    error UnknownGame();
    error ZeroStake();
    error StakeTooLarge();
    error InsufficientBankroll();
    error NoCommitment();
    error CommitmentTooFresh();
    error CommitmentMismatch();
    error BadCommitment();
    error NotPending();
    error Expired();
    error NotExpired();
    error InvalidProof();
    error NothingToClaim();
    error TransferFailed();

    modifier onlyOperator() {
        require(msg.sender == operator, NotOperator());
        _;
    }

    modifier nonReentrant() {
        require(!locked, Reentrancy());
        locked = true;
        _;
        locked = false;
    }

    constructor(IGroth16Verifier verifier_, address operator_, uint64 settleTimeout_) payable {
        verifier = verifier_;
        operator = operator_;
        settleTimeout = settleTimeout_;
        _addGame("coinflip", 2, 1, 19_800);
        _addGame("dice", 100, 49, 20_000);
        _addGame("wheel", 10, 1, 98_000);
        if (msg.value > 0) emit BankrollFunded(msg.sender, msg.value);
    }

    receive() external payable {
        emit BankrollFunded(msg.sender, msg.value);
    }

    // ----------------------------------------------------------------------------------- operator

    /// @notice Queue server-seed commitments (Poseidon hashes, 0 < h < FIELD_SIZE, never reused).
    function publishCommitments(bytes32[] calldata hashes) external onlyOperator {
        uint256 index = commitments.length;
        for (uint256 i = 0; i < hashes.length; ++i) {
            bytes32 h = hashes[i];
            require(h != bytes32(0) && uint256(h) < FIELD_SIZE && !commitmentKnown[h], BadCommitment());
            commitmentKnown[h] = true;
            commitments.push(Commitment(h, uint64(block.number)));
            emit CommitmentPublished(index + i, h);
        }
    }

    /// @notice The operator takes bankroll that no pending bet or credit needs.
    function withdrawBankroll(address payable to, uint256 amount) external onlyOperator nonReentrant {
        require(amount <= freeBankroll(), InsufficientBankroll());
        emit BankrollWithdrawn(to, amount);
        (bool ok, ) = to.call{value: amount}("");
        require(ok, TransferFailed());
    }

    // ------------------------------------------------------------------------------------ players

    /// @param expectedServerSeedHash bytes32(0), or the commitment this bet must take (see above).
    function placeBet(string calldata game, bytes32 clientSeed, bytes32 expectedServerSeedHash)
        external
        payable
        nonReentrant
        returns (uint256 betId)
    {
        uint256 gi = gameIndex[keccak256(bytes(game))];
        require(gi != 0, UnknownGame());
        require(msg.value > 0, ZeroStake());
        require(msg.value <= type(uint128).max, StakeTooLarge());
        uint256 maxPayout = (msg.value * games[gi - 1].multiplierBps) / BPS;
        // the balance already includes msg.value
        require(address(this).balance >= lockedPayout + totalCredits + maxPayout, InsufficientBankroll());

        uint256 ci = nextCommitment;
        require(ci < commitments.length, NoCommitment());
        Commitment memory c = commitments[ci];
        require(c.publishedBlock < block.number, CommitmentTooFresh());
        require(expectedServerSeedHash == bytes32(0) || expectedServerSeedHash == c.hash, CommitmentMismatch());
        nextCommitment = ci + 1;

        betId = nextBetId++;
        uint64 deadline = uint64(block.timestamp) + settleTimeout;
        bets[betId] = Bet({
            player: msg.sender,
            deadline: deadline,
            game: uint8(gi - 1),
            status: Status.Pending,
            stake: uint128(msg.value),
            clientSeed: clientSeed,
            serverSeedHash: c.hash
        });
        lockedPayout += maxPayout;
        emit BetPlaced(betId, msg.sender, address(0), msg.value, game, clientSeed, c.hash, deadline);
    }

    /// @notice Settle a pending bet with a Groth16 proof of `outcome`. Anyone may submit it (only the
    /// holder of the server seed can produce one). Give the transaction explicit gas (>= 400k): the
    /// verifier answers false, not a revert, when it runs out of gas, which makes this call revert.
    function settleBet(
        uint256 betId,
        uint256 outcome,
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC
    ) external nonReentrant {
        Bet storage b = bets[betId];
        require(b.status == Status.Pending, NotPending());
        require(block.timestamp <= b.deadline, Expired());
        // betId < nextBetId, far below FIELD_SIZE (the circuit would otherwise reduce it mod p).
        uint256[4] memory signals = [outcome, uint256(b.serverSeedHash), betId, uint256(b.clientSeed) % FIELD_SIZE];
        require(verifier.verifyProof(pA, pB, pC, signals), InvalidProof());

        Game storage g = games[b.game];
        uint256 stake = b.stake;
        (bool won, uint256 payout) = _result(g, outcome, stake);
        address player = b.player;
        b.status = Status.Settled;
        lockedPayout -= (stake * g.multiplierBps) / BPS;
        emit BetSettled(betId, player, outcome, won, payout, pA, pB, pC);
        _pay(player, payout);
    }

    /// @notice Refund a bet its deadline has passed without settlement. Anyone may call; the stake
    /// goes to the player.
    function refundBet(uint256 betId) external nonReentrant {
        Bet storage b = bets[betId];
        require(b.status == Status.Pending, NotPending());
        require(block.timestamp > b.deadline, NotExpired());
        uint256 stake = b.stake;
        address player = b.player;
        b.status = Status.Refunded;
        lockedPayout -= (stake * games[b.game].multiplierBps) / BPS;
        emit BetRefunded(betId, player, stake);
        _pay(player, stake);
    }

    /// @notice Withdraw a payout or refund whose direct transfer failed.
    function claimCredit() external nonReentrant {
        uint256 amount = credits[msg.sender];
        require(amount > 0, NothingToClaim());
        credits[msg.sender] = 0;
        totalCredits -= amount;
        emit CreditClaimed(msg.sender, amount);
        (bool ok, ) = payable(msg.sender).call{value: amount}("");
        require(ok, TransferFailed());
    }

    // -------------------------------------------------------------------------------------- views

    function getBet(uint256 betId) external view returns (Bet memory) {
        return bets[betId];
    }

    function gameCount() external view returns (uint256) {
        return games.length;
    }

    function getGame(uint256 index) external view returns (Game memory) {
        return games[index];
    }

    function commitmentCount() external view returns (uint256) {
        return commitments.length;
    }

    function availableCommitments() external view returns (uint256) {
        return commitments.length - nextCommitment;
    }

    function freeBankroll() public view returns (uint256) {
        uint256 owed = lockedPayout + totalCredits;
        uint256 bal = address(this).balance;
        return bal > owed ? bal - owed : 0;
    }

    /// @notice The settlement rule, for clients and tests: what `settleBet` pays for this outcome.
    function resultOf(string calldata game, uint256 outcome, uint256 stake) external view returns (bool won, uint256 payout) {
        uint256 gi = gameIndex[keccak256(bytes(game))];
        require(gi != 0, UnknownGame());
        return _result(games[gi - 1], outcome, stake);
    }

    // ----------------------------------------------------------------------------------- internal

    function _addGame(string memory name, uint64 modulus, uint64 winBelow, uint32 multiplierBps) private {
        games.push(Game(name, modulus, winBelow, multiplierBps));
        gameIndex[keccak256(bytes(name))] = games.length;
    }

    function _result(Game storage g, uint256 outcome, uint256 stake) private view returns (bool won, uint256 payout) {
        won = outcome % g.modulus < g.winBelow;
        payout = won ? (stake * g.multiplierBps) / BPS : 0;
    }

    /// Pays with bounded gas and without copying return data; on failure the amount becomes a credit.
    function _pay(address to, uint256 amount) private {
        if (amount == 0) return;
        bool ok;
        uint256 gasLimit = PAYOUT_GAS;
        assembly ("memory-safe") {
            ok := call(gasLimit, to, amount, 0, 0, 0, 0)
        }
        if (!ok) {
            credits[to] += amount;
            totalCredits += amount;
            emit PayoutDeferred(to, amount);
        }
    }
}
