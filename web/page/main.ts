// The live page: the latest bets (the newest through GraphQL `bets`, then the Socket.IO firehose: a
// short backlog replayed, then live), a fairness panel per game (`fairnessStats`, ./fairness.ts),
// a followed wallet (live subscription first, then its history through GraphQL, so nothing falls
// in between), and a bet's Groth16 proof verified here with snarkjs' browser build against the
// network's served verification key. DOM built with textContent only: no HTML from data.
import { formatAmount } from "../../client/amount.ts";
import { betFinality } from "../../client/finality.ts";
import { createGraphQLClient } from "../../client/graphql.ts";
import type { BetFieldsFragment, BetWithProofQuery, TokenFieldsFragment } from "../../client/generated/graphql.ts";
import {
  betTokenQuery,
  betWithProofQuery,
  fairnessStatsQuery,
  latestBetsQuery,
  networksQuery,
  playerBetsQuery,
  verificationKeyQuery,
} from "../../client/operations.ts";
import { verifyBetProof, type Groth16Verify } from "../../client/proof.ts";
import { checkServedKey } from "../../client/key-trust.ts";
import { renderFairness } from "./fairness.ts";
import { openBetsFeed, type BetsFeed, type BetUpdatePayload, type FeedStatus } from "../../client/realtime.ts";

const LATEST_ROWS = 40;
/** How many of the newest bets `bets` reads at load, so the table is not empty before the feed speaks. */
const LATEST_READ = 20;
const FAIRNESS_REFRESH_MS = 10_000;
/** FINALIZED updates come in bursts (one per bet a block finalizes): one fairness read per burst. */
const FAIRNESS_DEBOUNCE_MS = 1_000;
const WALLET_ROWS = 50;
const SOCKET_PATH = "/socket.io";
const SNARKJS_PATH = "/assets/snarkjs.min.js";
const VERIFY_TIMEOUT_MS = 30_000;
const NETWORKS_REFRESH_MS = 15_000;

const api = createGraphQLClient({ url: "/graphql" });

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing from the page`);
  return found as T;
}

function cell(row: HTMLTableRowElement, text: string, className?: string): void {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
}

function shortHex(value: string): string {
  return value.length > 14 ? `${value.slice(0, 6)}…${value.slice(-4)}` : value;
}

/** Token metadata by "chainId:address", learnt from GraphQL reads (the feed's payloads carry the address only). */
const tokens = new Map<string, TokenInfo>();
const tokenLookups = new Set<string>();

/** An amount in whole tokens (at most 4 fraction digits, cut toward zero) with the symbol; in smallest units until the token is known. */
function amountText(chainId: number, token: string, amount: string): string {
  const info = tokens.get(`${chainId}:${token}`);
  return info ? formatAmount(amount, info, { maxFractionDigits: 4, withSymbol: true }) : `${amount} units`;
}

/** Reads the token of a feed bet once per token, then shows every amount in it in whole tokens. */
function learnToken(chainId: number, betId: string, token: string): void {
  const key = `${chainId}:${token}`;
  if (tokens.has(key) || tokenLookups.has(key)) return;
  tokenLookups.add(key);
  api
    .request(betTokenQuery, { chainId, betId })
    .then(({ betResult }) => {
      if (betResult) rememberToken(chainId, betResult.tokenInfo);
    })
    .catch(() => undefined)
    .finally(() => tokenLookups.delete(key));
}

function rememberToken(chainId: number, info: TokenInfo): void {
  const key = `${chainId}:${info.address}`;
  if (tokens.has(key)) return;
  tokens.set(key, info);
  latest.refreshAmounts();
  walletBets.refreshAmounts();
}

type TokenInfo = TokenFieldsFragment;
type ShownBet = Pick<BetFieldsFragment, "chainId" | "betId" | "player" | "token" | "stake" | "status" | "finalized"> & {
  tokenInfo?: TokenInfo;
  result: { won: boolean; payout: string; proof: { verified: boolean } } | null;
};
type Origin = "live" | "replay" | "read";
const FINAL: ReadonlySet<string> = new Set(["SETTLED", "REFUNDED", "REMOVED"]);

/** A table of bets, newest on top, one row per bet (updated in place). */
class BetTable {
  private readonly rows = new Map<string, HTMLTableRowElement>();

  private readonly body: HTMLTableSectionElement;
  private readonly max: number;
  constructor(body: HTMLTableSectionElement, max: number) {
    this.body = body;
    this.max = max;
  }

  clear(): void {
    this.rows.clear();
    this.body.replaceChildren();
  }

  /** A pushed update: applied in seq order, so it always wins. */
  applyUpdate(update: BetUpdatePayload, origin: Origin): void {
    if (update.type === "FINALIZED") this.markFinal(update);
    else this.put(update.bet, update.type === "REMOVED" ? "REMOVED" : update.bet.status, origin, update.seq, true);
  }

  /**
   * A GraphQL read: never overwrites a newer state a live update already showed, nor duplicates a
   * row (one per bet). Bets not shown yet go below the rows shown: reads are given newest first.
   */
  applyRead(bet: ShownBet): void {
    const existing = this.rows.get(`${bet.chainId}:${bet.betId}`);
    if (existing && (existing.dataset.status === bet.status || FINAL.has(existing.dataset.status ?? ""))) return;
    this.put(bet, bet.status, "read", undefined, false);
  }

  /** Re-renders every amount cell (a token became known). */
  refreshAmounts(): void {
    for (const row of this.rows.values()) {
      for (const td of row.cells) {
        const { amount, prefix } = td.dataset;
        if (amount !== undefined) td.textContent = `${prefix ?? ""}${amountText(Number(row.dataset.chainId), row.dataset.token ?? "", amount)}`;
      }
    }
  }

  /** FINALIZED: the shown result can no longer be reorged away (a bet not shown stays hidden). */
  private markFinal(update: BetUpdatePayload): void {
    const row = this.rows.get(`${update.chainId}:${update.betId}`);
    if (!row || row.dataset.status === "REMOVED") return;
    row.dataset.final = "true";
    row.dataset.seq = update.seq;
    const status = row.querySelector(`.status-${row.dataset.status}`);
    if (status) status.textContent = `${row.dataset.status} ✓ final`;
  }

  private put(bet: ShownBet, status: string, origin: Origin, seq: string | undefined, onTop: boolean): void {
    const key = `${bet.chainId}:${bet.betId}`;
    const row = document.createElement("tr");
    const final = status !== "REMOVED" && status !== "PENDING" && bet.finalized;
    Object.assign(row.dataset, { chainId: String(bet.chainId), betId: bet.betId, status, origin, player: bet.player, final: String(final) });
    if (seq) row.dataset.seq = seq;
    cell(row, `#${bet.betId}`);
    cell(row, shortHex(bet.player));
    if (bet.tokenInfo) rememberToken(bet.chainId, bet.tokenInfo);
    else learnToken(bet.chainId, bet.betId, bet.token);
    row.dataset.token = bet.token;
    amountCell(row, bet.stake, "");
    cell(row, final ? `${status} ✓ final` : status, `status-${status}`);
    if (bet.result?.won) amountCell(row, bet.result.payout, "won ");
    else cell(row, bet.result ? "lost" : "");
    // The service's own check under the network's key: a bet settled on chain may still fail it
    // (a verifier contract that accepts bad proofs), and that must be seen at a glance.
    if (bet.result) row.dataset.verified = String(bet.result.proof.verified);
    if (!bet.result) cell(row, "");
    else if (bet.result.proof.verified) cell(row, "✓ verified", "proof-verified");
    else cell(row, "✗ NOT VERIFIED", "proof-unverified");
    if (origin === "live") row.className = "fresh";
    const previous = this.rows.get(key);
    if (previous && !onTop) previous.replaceWith(row);
    else {
      previous?.remove();
      if (onTop) this.body.prepend(row);
      else this.body.append(row);
    }
    this.rows.set(key, row);
    while (this.body.rows.length > this.max) {
      const last = this.body.rows[this.body.rows.length - 1]!;
      this.rows.delete(`${last.dataset.chainId}:${last.dataset.betId}`);
      last.remove();
    }
  }
}

/** A cell showing an amount of the row's token, re-rendered once the token is known (refreshAmounts). */
function amountCell(row: HTMLTableRowElement, amount: string, prefix: string): void {
  cell(row, amountText(Number(row.dataset.chainId), row.dataset.token ?? "", amount));
  const td = row.cells[row.cells.length - 1]!;
  Object.assign(td.dataset, { amount, prefix });
  td.textContent = `${prefix}${td.textContent}`;
}

const latest = new BetTable(element("latest"), LATEST_ROWS);
const walletBets = new BetTable(element("wallet-bets"), WALLET_ROWS);
const networkNames = new Map<number, string>();
/** Each network's finality depth (`NetworkConfig.confirmations`), for "n of m confirmations". */
const networkConfirmations = new Map<number, number>();

function showStatus(status: FeedStatus): void {
  const target = element("feed-status");
  target.dataset.state = status.state;
  target.textContent =
    status.state === "live" ? "● live" : status.state === "connecting" ? "connecting…" : status.state === "reconnecting" ? "reconnecting…" : "closed";
}

async function showNetworks(): Promise<void> {
  const { networkConfigs } = await api.request(networksQuery);
  for (const network of networkConfigs) {
    networkNames.set(network.chainId, network.name);
    networkConfirmations.set(network.chainId, network.confirmations);
  }
  element("networks").textContent =
    networkConfigs
      .map(
        (n) =>
          `${n.name} (chain ${n.chainId}) · head ${n.indexing.headBlock} · final ≤ ${n.indexing.finalizedBlock}${n.indexing.isReady ? "" : " · catching up"}`,
      )
      .join("   |   ") || "no network indexed yet";
}

// ---------------------------------------------------------------------------------------------
// Following a wallet
// ---------------------------------------------------------------------------------------------

let walletFeed: BetsFeed | undefined;

async function readWallet(wallet: string): Promise<void> {
  const { playerBets, pendingBetCount } = await api.request(playerBetsQuery, { wallet, first: WALLET_ROWS });
  element("wallet-summary").textContent = `${playerBets.totalCount} bets, ${pendingBetCount} pending — newest first, live`;
  for (const bet of playerBets.nodes) walletBets.applyRead(bet);
}

async function followWallet(input: string): Promise<void> {
  const wallet = input.trim();
  walletFeed?.close();
  walletBets.clear();
  element("wallet-export").replaceChildren();
  const summary = element("wallet-summary");
  if (!/^0x[0-9a-fA-F]{40}$/.test(wallet)) {
    summary.textContent = "Not an address: 0x followed by 40 hex digits.";
    return;
  }
  summary.textContent = "connecting…";
  history.replaceState(null, "", `#wallet=${wallet}`);
  // The wallet's whole history as a file (docs/reference/csv.md), whatever the feed does. Made
  // here: the static page references nothing outside /assets/ (server.test.ts).
  const csv = document.createElement("a");
  csv.id = "wallet-csv";
  csv.href = `/wallets/${wallet}/bets.csv`;
  csv.download = "";
  csv.textContent = "download CSV";
  element("wallet-export").replaceChildren(csv);
  // Live first, then the read: an update between the two is either in the read or pushed after it.
  let markLive: () => void = () => undefined;
  const live = new Promise<void>((resolve) => (markLive = resolve));
  walletFeed = openBetsFeed({
    urls: [location.origin],
    path: SOCKET_PATH,
    subscription: { wallets: [wallet] },
    onUpdate: (update) => walletBets.applyUpdate(update, "live"),
    onStatus: (status) => status.state === "live" && markLive(),
    // Too long offline to replay: read the history again (updates keep coming meanwhile).
    onResync: () => readWallet(wallet),
    onError: (error) => (summary.textContent = `${error.code}: ${error.message}`),
  });
  await live;
  await readWallet(wallet);
}

// ---------------------------------------------------------------------------------------------
// A bet and its proof
// ---------------------------------------------------------------------------------------------

type BetWithProof = NonNullable<BetWithProofQuery["betResult"]>;
let shown: BetWithProof | undefined;
/** Bumped whenever another bet is opened, so a late answer for the previous one is ignored. */
let openToken = 0;
const verificationKeys = new Map<number, Promise<string>>();
let snarkjsLoading: Promise<{ groth16: Groth16Verify }> | undefined;

function verificationKeyOf(chainId: number): Promise<string> {
  let key = verificationKeys.get(chainId);
  if (!key) {
    key = api.request(verificationKeyQuery, { chainId }).then(({ networkConfigs }) => {
      const network = networkConfigs[0];
      if (!network) throw new Error(`chain ${chainId} is not indexed`);
      return network.verificationKey.json;
    });
    key.catch(() => verificationKeys.delete(chainId));
    verificationKeys.set(chainId, key);
  }
  return key;
}

/** snarkjs' browser build (a classic script defining `snarkjs`), loaded on the first verification. */
function loadSnarkjs(): Promise<{ groth16: Groth16Verify }> {
  snarkjsLoading ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = SNARKJS_PATH;
    script.onload = () => {
      const loaded = (globalThis as { snarkjs?: { groth16: Groth16Verify } }).snarkjs;
      if (loaded) resolve(loaded);
      else reject(new Error("snarkjs did not load"));
    };
    script.onerror = () => reject(new Error("snarkjs could not be fetched"));
    document.head.append(script);
  });
  snarkjsLoading.catch(() => (snarkjsLoading = undefined));
  return snarkjsLoading;
}

function setKeyTrust(path: "none" | "served" | "pinned" | "refused", text: string): void {
  const target = element("key-trust");
  target.dataset.path = path;
  target.textContent = text;
}

function setVerifyResult(state: "idle" | "running" | "verified" | "not-verified" | "error", text: string): void {
  const target = element("verify-result");
  target.dataset.state = state;
  target.textContent = text;
}

function field(list: HTMLElement, name: string, value: string | null | undefined): void {
  if (value === null || value === undefined || value === "") return;
  const dt = document.createElement("dt");
  dt.textContent = name;
  const dd = document.createElement("dd");
  dd.textContent = value;
  list.append(dt, dd);
}

async function openBet(chainId: number, betId: string): Promise<void> {
  const token = ++openToken;
  const section = element("detail");
  section.hidden = false;
  section.dataset.chainId = String(chainId);
  section.dataset.betId = betId;
  for (const row of document.querySelectorAll("tr.selected")) row.classList.remove("selected");
  for (const row of document.querySelectorAll<HTMLTableRowElement>(`tr[data-chain-id="${chainId}"][data-bet-id="${betId}"]`)) row.classList.add("selected");
  setVerifyResult("idle", "");
  setKeyTrust("none", "");
  const verify = element<HTMLButtonElement>("verify");
  verify.disabled = true;
  const list = element("detail-fields");
  list.replaceChildren();
  element("detail-title").textContent = `Bet #${betId} on ${networkNames.get(chainId) ?? `chain ${chainId}`}`;

  const { betResult } = await api.request(betWithProofQuery, { chainId, betId });
  if (token !== openToken) return;
  shown = betResult ?? undefined;
  if (!betResult) {
    field(list, "status", "not found (removed by a reorg, or not indexed yet)");
    return;
  }
  section.dataset.status = betResult.status;
  // The one finality rule (core/finality.ts through the client); the server's `finalized` until the networks are read.
  const required = networkConfirmations.get(chainId);
  const finality = required === undefined ? undefined : betFinality(betResult, { confirmations: required });
  section.dataset.finalized = String(finality?.finalized ?? betResult.finalized);
  field(
    list,
    "status",
    `${betResult.status} (${finality?.label ?? (betResult.finalized ? "final" : `${betResult.confirmations} confirmations, not final yet`)})`,
  );
  field(list, "player", betResult.player);
  field(list, "game", betResult.game);
  rememberToken(chainId, betResult.tokenInfo);
  const { symbol, decimals } = betResult.tokenInfo;
  field(list, "stake", `${formatAmount(betResult.stake, betResult.tokenInfo)} ${symbol} (${betResult.stake} in units of 10^-${decimals})`);
  field(list, "placed", `block ${betResult.placedBlock} · ${new Date(Number(betResult.placedAt) * 1000).toISOString()} · tx ${betResult.placedTx}`);
  if (betResult.settledBlock) field(list, "settled", `block ${betResult.settledBlock} · tx ${betResult.settledTx}`);
  if (betResult.refundedBlock) field(list, "refunded", `block ${betResult.refundedBlock} · tx ${betResult.refundedTx}`);
  field(list, "client seed", betResult.clientSeed);
  field(list, "server seed commitment", betResult.serverSeedHash);
  const result = betResult.result;
  if (!result) {
    setVerifyResult("idle", betResult.status === "PENDING" ? "no proof yet: the bet is pending" : "no proof: the bet was refunded");
    return;
  }
  field(list, "outcome", result.outcome);
  field(list, "result", result.won ? `won ${formatAmount(result.payout, betResult.tokenInfo)} ${symbol}` : "lost");
  field(list, "public signals", result.proof.publicSignals.join(", "));
  field(
    list,
    "service says",
    result.proof.verified
      ? "verified (not used here)"
      : "NOT VERIFIED: the proof fails under the network's key, though the chain settled it (its verifier contract accepted it)",
  );
  if (!result.proof.verified) list.lastElementChild?.classList.add("proof-unverified");
  verify.disabled = false;
}

async function verifyShown(): Promise<void> {
  const bet = shown;
  const token = openToken;
  if (!bet) return;
  setVerifyResult("running", "verifying…");
  // The trust path of the key: a key hash the user pinned, or (none pinned) the service's word.
  const pinned = element<HTMLInputElement>("pinned-key").value.trim();
  const keyJson = await verificationKeyOf(bet.chainId);
  const trust = pinned ? await checkServedKey(keyJson, { pinnedSha256: pinned }) : undefined;
  if (token !== openToken) return;
  setKeyTrust(
    trust === undefined ? "served" : trust.trusted ? "pinned" : "refused",
    trust === undefined
      ? "key: as served by the service, not checked (pin its sha256 above to check it)"
      : trust.trusted
        ? "key: matches your pinned sha256 ✓"
        : `key: REFUSED (${trust.reason})`,
  );
  if (trust && !trust.trusted) {
    setVerifyResult("not-verified", "not verified ✗ (the served key is not the pinned one)");
    return;
  }
  const check = await Promise.race([
    loadSnarkjs().then((snarkjs) => verifyBetProof(bet, keyJson, snarkjs.groth16)),
    // snarkjs waits forever for workers a browser refused to start: say so rather than spin.
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${VERIFY_TIMEOUT_MS / 1000} s`)), VERIFY_TIMEOUT_MS)),
  ]);
  if (token !== openToken) return;
  if (check.verified) setVerifyResult("verified", "verified ✓");
  else setVerifyResult("not-verified", `not verified ✗ (${check.reason})`);
}

// ---------------------------------------------------------------------------------------------
// Wiring
// ---------------------------------------------------------------------------------------------

function reportError(error: unknown): void {
  element("networks").textContent = `error: ${error instanceof Error ? error.message : String(error)}`;
}

for (const body of [element("latest"), element("wallet-bets")]) {
  body.addEventListener("click", (event) => {
    const row = (event.target as Element).closest("tr");
    if (row?.dataset.chainId && row.dataset.betId) openBet(Number(row.dataset.chainId), row.dataset.betId).catch(reportError);
  });
}
element("verify").addEventListener("click", () => {
  verifyShown().catch((error: unknown) => setVerifyResult("error", `could not verify: ${error instanceof Error ? error.message : String(error)}`));
});
element<HTMLFormElement>("wallet-form").addEventListener("submit", (event) => {
  event.preventDefault();
  followWallet(element<HTMLInputElement>("wallet-input").value).catch(reportError);
});

// ---------------------------------------------------------------------------------------------
// Latest bets and fairness
// ---------------------------------------------------------------------------------------------

/** The newest bets through GraphQL: rows the feed already shows are kept (a pushed state is never older). */
async function readLatest(): Promise<void> {
  const { bets } = await api.request(latestBetsQuery, { first: LATEST_READ });
  for (const bet of bets.nodes) latest.applyRead(bet);
}

async function showFairness(): Promise<void> {
  const { fairnessStats } = await api.request(fairnessStatsQuery, {});
  renderFairness(element("fairness-games"), fairnessStats, (chainId) => networkNames.get(chainId) ?? `chain ${chainId}`);
}

let fairnessPending = false;
function refreshFairnessSoon(): void {
  if (fairnessPending) return;
  fairnessPending = true;
  setTimeout(() => {
    fairnessPending = false;
    showFairness().catch(reportError);
  }, FAIRNESS_DEBOUNCE_MS);
}

showNetworks().catch(reportError);
setInterval(() => showNetworks().catch(reportError), NETWORKS_REFRESH_MS);
readLatest().catch(reportError);
showFairness().catch(reportError);
setInterval(() => showFairness().catch(reportError), FAIRNESS_REFRESH_MS);
openBetsFeed({
  urls: [location.origin],
  path: SOCKET_PATH,
  subscription: { all: true },
  backlog: LATEST_ROWS,
  onUpdate: (update, meta) => {
    latest.applyUpdate(update, meta.replayed ? "replay" : "live");
    if (update.type === "FINALIZED" && !meta.replayed) refreshFairnessSoon();
  },
  onStatus: showStatus,
  // Too long offline to replay: read the newest bets again (updates keep coming meanwhile).
  onResync: () => readLatest().catch(reportError),
});
const fromHash = /^#wallet=(0x[0-9a-fA-F]{40})$/.exec(location.hash)?.[1];
if (fromHash) {
  element<HTMLInputElement>("wallet-input").value = fromHash;
  followWallet(fromHash).catch(reportError);
}
