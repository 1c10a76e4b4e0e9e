// BetVault on a real anvil with real Groth16 proofs (zk/groth16.ts, DEV artifacts).
import { readFileSync } from "node:fs";
import {
  createTestClient,
  decodeEventLog,
  getAbiItem,
  getAddress,
  http,
  pad,
  parseEther,
  parseEventLogs,
  toEventSelector,
  toHex,
  type Abi,
  type Account,
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type PublicClient,
  type TestClient,
  type Transport,
  type TransactionReceipt,
  type WalletClient,
  zeroHash,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { computeOutcome, loadDevVerificationKey, proveBetOutcome, releaseProverResources, serverSeedCommitment, verifyBetProof } from "../zk/groth16.ts";
import { startAnvil, type AnvilInstance } from "./anvil.ts";
import {
  EVENT_SIGNATURES,
  EVENT_TOPICS,
  FIELD_MODULUS,
  GAME_IDS,
  SETTLE_GAS,
  betResult,
  clientSeedToField,
  fieldToBytes32,
  fromSnarkjsProof,
  maxPayout,
  parseSolidityCalldata,
  publicSignalsOf,
  toSnarkjsProof,
  type GameId,
} from "./betvault.ts";
import { localChain, publicClientFor, walletClientFor } from "./clients.ts";
import { solcCompile } from "./compile.ts";
import { deployBetSystem, type BetSystem } from "./deploy.ts";
import { DEV_PRIVATE_KEYS } from "./devAccounts.ts";
import { betVaultAbi } from "./generated/artifacts.ts";

const TIMEOUT = 60; // settle window of this deployment, seconds
const BANKROLL = parseEther("10");

let anvil: AnvilInstance;
let sys: BetSystem;
let chain: Chain;
let pub: PublicClient<Transport, Chain>;
let testClient: TestClient<"anvil", Transport, Chain>;
let operator: WalletClient<Transport, Chain, Account>;
let players: WalletClient<Transport, Chain, Account>[];
let seedCounter = BigInt(Date.now()) * 1_000_000n;

const vault = () => ({ address: sys.betVault, abi: betVaultAbi }) as const;
const wallet = (i: number): WalletClient<Transport, Chain, Account> => {
  const w = players[i];
  if (!w) throw new Error(`no player ${i}`);
  return w;
};

async function mined(hash: Promise<Hash> | Hash): Promise<TransactionReceipt> {
  return pub.waitForTransactionReceipt({ hash: await hash });
}

/** Publish one commitment (the queue is empty between tests, so the next bet takes it). */
async function publish(serverSeed: bigint): Promise<Hex> {
  const commitment = fieldToBytes32(serverSeedCommitment(serverSeed));
  const r = await mined(operator.writeContract({ ...vault(), functionName: "publishCommitments", args: [[commitment]] }));
  expect(r.status).toBe("success");
  return commitment;
}

/** A server seed whose outcome for (betId, clientSeed) satisfies `want`: lets tests force a win or a loss. */
function seedFor(betId: bigint, clientSeed: Hex, want: (outcome: bigint) => boolean): bigint {
  for (;;) {
    const serverSeed = ++seedCounter;
    if (want(computeOutcome({ serverSeed, betId, clientSeed }))) return serverSeed;
  }
}

interface Placed {
  betId: bigint;
  serverSeed: bigint;
  clientSeed: Hex;
  game: GameId;
  stake: bigint;
  player: Address;
  receipt: TransactionReceipt;
}

async function placeWith(playerIndex: number, game: GameId, stake: bigint, want: (outcome: bigint) => boolean = () => true): Promise<Placed> {
  const betId = await pub.readContract({ ...vault(), functionName: "nextBetId" });
  const clientSeed = toHex(crypto.getRandomValues(new Uint8Array(32)));
  const serverSeed = seedFor(betId, clientSeed, want);
  const commitment = await publish(serverSeed);
  const w = wallet(playerIndex);
  const receipt = await mined(w.writeContract({ ...vault(), functionName: "placeBet", args: [game, clientSeed, commitment], value: stake }));
  expect(receipt.status).toBe("success");
  return { betId, serverSeed, clientSeed, game, stake, player: w.account.address, receipt };
}

async function prove(bet: Placed) {
  return proveBetOutcome({ serverSeed: bet.serverSeed, betId: bet.betId, clientSeed: bet.clientSeed });
}

async function settleTx(
  from: WalletClient<Transport, Chain, Account>,
  betId: bigint,
  outcome: bigint,
  proof: ReturnType<typeof parseSolidityCalldata>,
  gas: bigint = SETTLE_GAS,
): Promise<TransactionReceipt> {
  return mined(from.writeContract({ ...vault(), functionName: "settleBet", args: [betId, outcome, proof.pA, proof.pB, proof.pC], gas }));
}

async function betStatus(betId: bigint): Promise<number> {
  return (await pub.readContract({ ...vault(), functionName: "getBet", args: [betId] })).status;
}

beforeAll(async () => {
  anvil = await startAnvil();
  sys = await deployBetSystem({ rpcUrl: anvil.rpcUrl, settleTimeoutSeconds: TIMEOUT, bankroll: BANKROLL });
  chain = localChain(anvil.chainId, anvil.rpcUrl);
  pub = publicClientFor(chain, anvil.rpcUrl, { pollingInterval: 20 });
  testClient = createTestClient({ mode: "anvil", chain, transport: http(anvil.rpcUrl) });
  operator = walletClientFor(chain, anvil.rpcUrl, privateKeyToAccount(sys.operator.privateKey), { pollingInterval: 20 });
  players = DEV_PRIVATE_KEYS.slice(1).map((k) => walletClientFor(chain, anvil.rpcUrl, privateKeyToAccount(k), { pollingInterval: 20 }));
});

afterAll(async () => {
  await releaseProverResources();
  await anvil?.stop();
});

describe("BetVault", () => {
  it("places and settles a bet with a real proof; events carry the documented fields and the proof", async () => {
    const stake = parseEther("0.5");
    const bet = await placeWith(0, "coinflip", stake, (o) => o % 2n === 0n); // a win
    expect(bet.betId).toBe(1n);

    // BetPlaced: raw topics and decoded fields
    const placedLog = bet.receipt.logs.find((l) => l.topics[0] === EVENT_TOPICS.BetPlaced);
    expect(placedLog?.topics).toEqual([EVENT_TOPICS.BetPlaced, pad(toHex(bet.betId), { size: 32 }), pad(bet.player.toLowerCase() as Hex, { size: 32 })]);
    const placed = parseEventLogs({ abi: betVaultAbi, eventName: "BetPlaced", logs: bet.receipt.logs })[0];
    const block = await pub.getBlock({ blockNumber: bet.receipt.blockNumber });
    expect(placed?.args).toEqual({
      betId: 1n,
      player: bet.player,
      token: "0x0000000000000000000000000000000000000000",
      stake,
      game: "coinflip",
      clientSeed: bet.clientSeed,
      serverSeedHash: fieldToBytes32(serverSeedCommitment(bet.serverSeed)),
      deadline: block.timestamp + BigInt(TIMEOUT),
    });
    expect(await pub.readContract({ ...vault(), functionName: "lockedPayout" })).toBe(maxPayout("coinflip", stake));

    const proved = await prove(bet);
    const calldata = parseSolidityCalldata(proved.solidityCalldata);
    const balanceBefore = await pub.getBalance({ address: bet.player });
    const receipt = await settleTx(operator, bet.betId, BigInt(proved.outcome), calldata);
    expect(receipt.status).toBe("success");
    expect(receipt.gasUsed).toBeLessThan(SETTLE_GAS);

    const settledLog = receipt.logs.find((l) => l.topics[0] === EVENT_TOPICS.BetSettled);
    expect(settledLog?.topics.slice(1)).toEqual([pad(toHex(bet.betId), { size: 32 }), pad(bet.player.toLowerCase() as Hex, { size: 32 })]);
    const settled = parseEventLogs({ abi: betVaultAbi, eventName: "BetSettled", logs: receipt.logs })[0];
    const expected = betResult("coinflip", BigInt(proved.outcome), stake);
    expect(expected.won).toBe(true);
    expect(settled?.args).toEqual({
      betId: bet.betId,
      player: bet.player,
      outcome: BigInt(proved.outcome),
      won: true,
      payout: (stake * 198n) / 100n,
      pA: calldata.pA,
      pB: calldata.pB,
      pC: calldata.pC,
    });
    expect(await pub.getBalance({ address: bet.player })).toBe(balanceBefore + expected.payout);
    expect(await betStatus(bet.betId)).toBe(2);
    expect(await pub.readContract({ ...vault(), functionName: "lockedPayout" })).toBe(0n);

    // The event alone is enough to re-verify off-chain: back to snarkjs' layout.
    if (!settled) throw new Error("no BetSettled");
    const snark = toSnarkjsProof(settled.args);
    expect(snark).toEqual(proved.proof);
    expect(fromSnarkjsProof(snark)).toEqual({ pA: calldata.pA, pB: calldata.pB, pC: calldata.pC });
    const signals = publicSignalsOf({
      outcome: settled.args.outcome,
      serverSeedHash: placed?.args.serverSeedHash ?? "0x",
      betId: bet.betId,
      clientSeed: bet.clientSeed,
    });
    expect(signals).toEqual(proved.publicSignals);
    expect(await verifyBetProof(loadDevVerificationKey().key, snark, signals)).toBe(true);
  });

  it("a losing bet pays nothing and keeps the stake in the bankroll", async () => {
    const stake = parseEther("0.2");
    const bet = await placeWith(1, "dice", stake, (o) => o % 100n >= 49n);
    const proved = await prove(bet);
    const before = await pub.getBalance({ address: bet.player });
    const freeBefore = await pub.readContract({ ...vault(), functionName: "freeBankroll" });
    const receipt = await settleTx(operator, bet.betId, BigInt(proved.outcome), parseSolidityCalldata(proved.solidityCalldata));
    const ev = parseEventLogs({ abi: betVaultAbi, eventName: "BetSettled", logs: receipt.logs })[0];
    expect(ev?.args.won).toBe(false);
    expect(ev?.args.payout).toBe(0n);
    expect(await pub.getBalance({ address: bet.player })).toBe(before);
    expect(await pub.readContract({ ...vault(), functionName: "freeBankroll" })).toBe(freeBefore + maxPayout("dice", stake));
  });

  it("won/payout follow the documented rule for every game (contract resultOf = betResult)", async () => {
    const outcomes = [0n, 1n, 48n, 49n, 99n, 100n, 9n, 10n, 11n, FIELD_MODULUS - 1n, FIELD_MODULUS - 2n];
    for (let i = 0; i < 20; i++) outcomes.push(BigInt(toHex(crypto.getRandomValues(new Uint8Array(31)))));
    const stake = 123_456_789_012_345n;
    for (const game of GAME_IDS) {
      for (const outcome of outcomes) {
        const [won, payout] = await pub.readContract({ ...vault(), functionName: "resultOf", args: [game, outcome, stake] });
        expect({ game, outcome, won, payout }).toEqual({ game, outcome, ...betResult(game, outcome, stake) });
      }
    }
    expect(betResult("coinflip", 4n, 100n)).toEqual({ won: true, payout: 198n });
    expect(betResult("coinflip", 5n, 100n)).toEqual({ won: false, payout: 0n });
    expect(betResult("dice", 148n, 100n)).toEqual({ won: true, payout: 200n });
    expect(betResult("dice", 149n, 100n)).toEqual({ won: false, payout: 0n });
    expect(betResult("wheel", 20n, 100n)).toEqual({ won: true, payout: 980n });
    expect(betResult("wheel", 21n, 100n)).toEqual({ won: false, payout: 0n });
  });

  it("rejects a proof for another bet, a tampered proof, a wrong outcome and an out-of-gas verification", async () => {
    const a = await placeWith(2, "coinflip", parseEther("0.1"));
    const b = await placeWith(3, "coinflip", parseEther("0.1"));
    const provedA = await prove(a);
    const pa = parseSolidityCalldata(provedA.solidityCalldata);
    const outcomeA = BigInt(provedA.outcome);
    const attempt = (betId: bigint, outcome: bigint, p: typeof pa) =>
      pub.simulateContract({ ...vault(), account: operator.account, functionName: "settleBet", args: [betId, outcome, p.pA, p.pB, p.pC], gas: SETTLE_GAS });

    await expect(attempt(b.betId, outcomeA, pa)).rejects.toThrow(/InvalidProof/); // a's proof for b
    await expect(attempt(a.betId, outcomeA + 1n, pa)).rejects.toThrow(/InvalidProof/); // wrong outcome
    await expect(attempt(a.betId, outcomeA + FIELD_MODULUS, pa)).rejects.toThrow(/InvalidProof/); // non-canonical
    await expect(attempt(a.betId, outcomeA, { ...pa, pA: [pa.pA[0] + 1n, pa.pA[1]] })).rejects.toThrow();
    await expect(attempt(a.betId, outcomeA, { ...pa, pC: [pa.pA[0], pa.pA[1]] })).rejects.toThrow(/InvalidProof/);
    const unswapped = {
      ...pa,
      pB: [
        [pa.pB[0][1], pa.pB[0][0]],
        [pa.pB[1][1], pa.pB[1][0]],
      ] as const,
    };
    await expect(attempt(a.betId, outcomeA, unswapped)).rejects.toThrow(); // snarkjs JSON order is not the calldata order

    // Mined transactions revert too, and leave the bet pending.
    const wrong = await settleTx(operator, b.betId, outcomeA, pa);
    expect(wrong.status).toBe("reverted");
    // Too little gas: the verifier answers false instead of reverting, the vault turns that into a revert.
    const starved = await settleTx(operator, a.betId, outcomeA, pa, 200_000n);
    expect(starved.status).toBe("reverted");
    expect(await betStatus(a.betId)).toBe(1);
    expect(await betStatus(b.betId)).toBe(1);

    // Anyone may submit the valid proof (only the seed holder can make one).
    const ok = await settleTx(wallet(5), a.betId, outcomeA, pa);
    expect(ok.status).toBe("success");
    expect(await betStatus(a.betId)).toBe(2);
    await expect(attempt(a.betId, outcomeA, pa)).rejects.toThrow(/NotPending/);
  });

  it("refunds only after the deadline, and a late proof is refused", async () => {
    const stake = parseEther("0.3");
    const bet = await placeWith(4, "wheel", stake);
    const proved = await prove(bet);
    const p = parseSolidityCalldata(proved.solidityCalldata);
    const refund = (from: WalletClient<Transport, Chain, Account>) =>
      pub.simulateContract({ ...vault(), account: from.account, functionName: "refundBet", args: [bet.betId] });
    await expect(refund(wallet(6))).rejects.toThrow(/NotExpired/);

    await testClient.increaseTime({ seconds: TIMEOUT + 1 });
    await testClient.mine({ blocks: 1 });
    await expect(
      pub.simulateContract({
        ...vault(),
        account: operator.account,
        functionName: "settleBet",
        args: [bet.betId, BigInt(proved.outcome), p.pA, p.pB, p.pC],
        gas: SETTLE_GAS,
      }),
    ).rejects.toThrow(/Expired/);

    const before = await pub.getBalance({ address: bet.player });
    const receipt = await mined(wallet(6).writeContract({ ...vault(), functionName: "refundBet", args: [bet.betId] })); // a third party
    expect(receipt.status).toBe("success");
    const ev = parseEventLogs({ abi: betVaultAbi, eventName: "BetRefunded", logs: receipt.logs })[0];
    expect(ev?.args).toEqual({ betId: bet.betId, player: bet.player, amount: stake });
    expect(receipt.logs.find((l) => l.topics[0] === EVENT_TOPICS.BetRefunded)?.topics.length).toBe(3);
    expect(await pub.getBalance({ address: bet.player })).toBe(before + stake);
    expect(await betStatus(bet.betId)).toBe(3);
    await expect(refund(wallet(6))).rejects.toThrow(/NotPending/);
  });

  it("guards commitments, games, stakes and the bankroll", async () => {
    type W = WalletClient<Transport, Chain, Account>;
    const seed32 = pad("0x1234", { size: 32 });
    const simPublish = (from: W, hashes: readonly Hex[]) =>
      pub.simulateContract({ ...vault(), account: from.account, functionName: "publishCommitments", args: [hashes] });
    const simPlace = (from: W, game: string, value: bigint) =>
      pub.simulateContract({ ...vault(), account: from.account, functionName: "placeBet", args: [game, seed32, zeroHash], value });
    const simWithdraw = (from: W, amount: bigint) =>
      pub.simulateContract({ ...vault(), account: from.account, functionName: "withdrawBankroll", args: [from.account.address, amount] });

    const good = fieldToBytes32(serverSeedCommitment(++seedCounter));
    await expect(simPublish(wallet(0), [good])).rejects.toThrow(/NotOperator/);
    await expect(simPublish(operator, [toHex(FIELD_MODULUS, { size: 32 })])).rejects.toThrow(/BadCommitment/);
    await expect(simPublish(operator, [pad("0x0", { size: 32 })])).rejects.toThrow(/BadCommitment/);
    await expect(simPublish(operator, [good, good])).rejects.toThrow(/BadCommitment/);

    expect(await pub.readContract({ ...vault(), functionName: "availableCommitments" })).toBe(0n);
    await expect(simPlace(wallet(0), "coinflip", 1000n)).rejects.toThrow(/NoCommitment/);

    // A commitment published in the same block as the bet cannot be used (no front-running a bet).
    await testClient.setAutomine(false);
    try {
      const pubHash = await operator.writeContract({ ...vault(), functionName: "publishCommitments", args: [[good]], gas: 200_000n });
      const betHash = await wallet(0).writeContract({
        ...vault(),
        functionName: "placeBet",
        args: ["coinflip", seed32, zeroHash],
        value: 1000n,
        gas: 300_000n,
      });
      await testClient.mine({ blocks: 1 });
      expect((await mined(pubHash)).status).toBe("success");
      const betReceipt = await mined(betHash);
      expect(betReceipt.status).toBe("reverted");
      expect(betReceipt.blockNumber).toBe((await mined(pubHash)).blockNumber);
    } finally {
      await testClient.setAutomine(true);
    }
    await expect(simPlace(wallet(0), "roulette", 1000n)).rejects.toThrow(/UnknownGame/);
    await expect(simPlace(wallet(0), "coinflip", 0n)).rejects.toThrow(/ZeroStake/);
    const free = await pub.readContract({ ...vault(), functionName: "freeBankroll" });
    // wheel pays 9.8x: a stake whose max payout exceeds the free bankroll (+ the stake) is refused
    const tooBig = (free * 10_000n) / 88_000n + parseEther("0.01");
    await expect(simPlace(wallet(0), "wheel", tooBig)).rejects.toThrow(/InsufficientBankroll/);
    await expect(simWithdraw(operator, free + 1n)).rejects.toThrow(/InsufficientBankroll/);
    await expect(simWithdraw(wallet(0), 1n)).rejects.toThrow(/NotOperator/);
    const w = await mined(operator.writeContract({ ...vault(), functionName: "withdrawBankroll", args: [operator.account.address, parseEther("1")] }));
    expect(w.status).toBe("success");
    expect(await pub.readContract({ ...vault(), functionName: "freeBankroll" })).toBe(free - parseEther("1"));
    // A bet pinned to another commitment than the queue head reverts; pinned to the head it goes through.
    const other = fieldToBytes32(serverSeedCommitment(++seedCounter));
    await expect(
      pub.simulateContract({ ...vault(), account: wallet(0).account, functionName: "placeBet", args: ["coinflip", seed32, other], value: 1000n }),
    ).rejects.toThrow(/CommitmentMismatch/);
    const ok = await mined(wallet(0).writeContract({ ...vault(), functionName: "placeBet", args: ["coinflip", seed32, good], value: 1000n }));
    expect(ok.status).toBe("success");
    const placed = parseEventLogs({ abi: betVaultAbi, eventName: "BetPlaced", logs: ok.logs })[0];
    expect(placed?.args.serverSeedHash).toBe(good);
    expect(placed?.args.betId).toBe(await pub.readContract({ ...vault(), functionName: "nextCommitment" })); // betId = index + 1
  });

  it("defers a payout the player cannot receive (or re-enters for) and lets it be claimed", async () => {
    const source = readFileSync(new URL("./contracts/test/TestPlayer.sol", import.meta.url), "utf8");
    const out = solcCompile({ "TestPlayer.sol": source }).contracts["TestPlayer.sol"]?.TestPlayer;
    if (!out) throw new Error("TestPlayer did not compile");
    const abi = out.abi as Abi;
    const deployHash = await wallet(7).deployContract({ abi, bytecode: `0x${out.evm.bytecode.object}`, args: [sys.betVault] });
    const deployed = (await mined(deployHash)).contractAddress;
    if (!deployed) throw new Error("no TestPlayer");
    const contractPlayer = getAddress(deployed);
    const call = (functionName: string, args: readonly unknown[], value?: bigint) =>
      mined(wallet(7).writeContract({ address: contractPlayer, abi, functionName, args, value, gas: 500_000n }));

    let owedSoFar = 0n;
    for (const mode of [1, 2]) {
      await call("setMode", [mode]);
      const betId = await pub.readContract({ ...vault(), functionName: "nextBetId" });
      const clientSeed = toHex(crypto.getRandomValues(new Uint8Array(32)));
      const serverSeed = seedFor(betId, clientSeed, (o) => o % 2n === 0n);
      await publish(serverSeed);
      const stake = parseEther("0.1");
      expect((await call("place", ["coinflip", clientSeed], stake)).status).toBe("success");
      const proved = await proveBetOutcome({ serverSeed, betId, clientSeed });
      const receipt = await settleTx(operator, betId, BigInt(proved.outcome), parseSolidityCalldata(proved.solidityCalldata));
      expect(receipt.status).toBe("success");
      const payout = (stake * 198n) / 100n;
      const deferred = receipt.logs
        .map((l) => decodeEventLog({ abi: betVaultAbi, data: l.data, topics: l.topics }))
        .find((e) => e.eventName === "PayoutDeferred");
      expect(deferred?.args).toEqual({ to: contractPlayer, amount: payout });
      owedSoFar += payout;
      expect(await pub.readContract({ ...vault(), functionName: "credits", args: [contractPlayer] })).toBe(owedSoFar);
    }
    const owed = await pub.readContract({ ...vault(), functionName: "credits", args: [contractPlayer] });
    await call("setMode", [0]);
    expect((await call("claim", [])).status).toBe("success");
    expect(await pub.getBalance({ address: contractPlayer })).toBe(owed);
    expect(await pub.readContract({ ...vault(), functionName: "totalCredits" })).toBe(0n);
  });

  it("exposes the documented event ABI (what an indexer decodes)", () => {
    const shape = (name: "BetPlaced" | "BetSettled" | "BetRefunded") => {
      type AbiEvent = Extract<(typeof betVaultAbi)[number], { type: "event" }>;
      const item = betVaultAbi.find((x): x is AbiEvent => x.type === "event" && x.name === name);
      return (item?.inputs ?? []).map((i) => `${i.type}${i.indexed ? " indexed" : ""} ${i.name}`);
    };
    expect(shape("BetPlaced")).toEqual([
      "uint256 indexed betId",
      "address indexed player",
      "address token",
      "uint256 stake",
      "string game",
      "bytes32 clientSeed",
      "bytes32 serverSeedHash",
      "uint64 deadline",
    ]);
    expect(shape("BetSettled")).toEqual([
      "uint256 indexed betId",
      "address indexed player",
      "uint256 outcome",
      "bool won",
      "uint256 payout",
      "uint256[2] pA",
      "uint256[2][2] pB",
      "uint256[2] pC",
    ]);
    expect(shape("BetRefunded")).toEqual(["uint256 indexed betId", "address indexed player", "uint256 amount"]);
    for (const name of ["BetPlaced", "BetSettled", "BetRefunded", "CommitmentPublished"] as const) {
      expect(toEventSelector(getAbiItem({ abi: betVaultAbi, name }))).toBe(EVENT_TOPICS[name]);
      expect(EVENT_TOPICS[name]).toBe(toEventSelector(EVENT_SIGNATURES[name]));
    }
    expect(clientSeedToField(`0x${"ff".repeat(32)}`)).toBe((2n ** 256n - 1n) % FIELD_MODULUS);
  });
});
