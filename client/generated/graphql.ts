/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** Where a bet is in its lifecycle: PENDING until it is settled with a proof or refunded after its deadline. */
export type BetStatus =
  /** Placed on-chain (BetPlaced), neither settled nor refunded yet. */
  | 'PENDING'
  /** Not settled before its deadline; the stake went back to the player (BetRefunded). */
  | 'REFUNDED'
  /** Settled with a Groth16 proof the contract verified (BetSettled); `result` holds the outcome and the proof. */
  | 'SETTLED';

/** Narrows bets (the explorer). Every field is optional; the fields given must all match. */
export type BetsFilter = {
  /** Only bets on this network. An unknown chainId is BAD_USER_INPUT. */
  chainId?: number | null | undefined;
  /** Only bets of this game id, exactly as recorded by the contract; at most 64 characters. */
  game?: string | null | undefined;
  /** Unix seconds, inclusive. */
  placedFrom?: string | null | undefined;
  /** Unix seconds, exclusive. */
  placedTo?: string | null | undefined;
  /** Only bets of this wallet (any case; mixed case must be a valid EIP-55 checksum). */
  player?: string | null | undefined;
  /** Only bets in one of these states. An empty list is BAD_USER_INPUT: omit the field to match every status. */
  status?: Array<BetStatus> | null | undefined;
  /** Only bets staked in this token (0x0000000000000000000000000000000000000000 for the native coin). */
  token?: string | null | undefined;
};

/** At least this block of a network: a query with `minBlock` is answered only from data that includes it. */
export type MinBlock = {
  /** The lowest indexed block the answer may be read at. */
  block: string;
  /** The network (an unknown chainId is BAD_USER_INPUT). */
  chainId: number;
};

/** Page order: of playerBets by (placedBlock, logIndex, chainId), of bets by (placedAt, chainId, betId). */
export type OrderDirection =
  /** Oldest first. */
  | 'ASC'
  /** Newest first. */
  | 'DESC';

/** Narrows playerBets. Every field is optional; the fields given must all match. */
export type PlayerBetsFilter = {
  /** Only bets on this network. An unknown chainId is BAD_USER_INPUT. */
  chainId?: number | null | undefined;
  /** Only bets of this game id, exactly as recorded by the contract; at most 64 characters. */
  game?: string | null | undefined;
  /** Unix seconds, inclusive. */
  placedFrom?: string | null | undefined;
  /** Unix seconds, exclusive. */
  placedTo?: string | null | undefined;
  /** Only bets in one of these states. An empty list is BAD_USER_INPUT: omit the field to match every status. */
  status?: Array<BetStatus> | null | undefined;
};

export type BetFieldsFragment = { chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, result: { outcome: string, won: boolean, payout: string, proof: { verified: boolean } } | null };

export type TokenFieldsFragment = { address: string, symbol: string, decimals: number };

export type NetworksQueryVariables = Exact<{ [key: string]: never; }>;


export type NetworksQuery = { networkConfigs: Array<{ chainId: number, name: string, confirmations: number, contracts: Array<{ name: string, address: string, deployBlock: string }>, indexing: { indexedBlock: string, headBlock: string, finalizedBlock: string, isReady: boolean } }> };

export type VerificationKeyQueryVariables = Exact<{
  chainId: number;
}>;


export type VerificationKeyQuery = { networkConfigs: Array<{ chainId: number, verificationKey: { protocol: string, curve: string, nPublic: number, json: string, sha256: string } }> };

export type BetWithProofQueryVariables = Exact<{
  chainId: number;
  betId: string;
}>;


export type BetWithProofQuery = { betResult: { chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, tokenInfo: { address: string, symbol: string, decimals: number }, result: { outcome: string, won: boolean, payout: string, proof: { protocol: string, curve: string, piA: Array<string>, piB: Array<Array<string>>, piC: Array<string>, publicSignals: Array<string>, solidityCalldata: string, verified: boolean } } | null } | null };

export type BetTokenQueryVariables = Exact<{
  chainId: number;
  betId: string;
}>;


export type BetTokenQuery = { betResult: { tokenInfo: { address: string, symbol: string, decimals: number } } | null };

export type BetsQueryVariables = Exact<{
  chainId: number;
  betIds: Array<string> | string;
}>;


export type BetsQuery = { betResults: Array<{ chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, result: { outcome: string, won: boolean, payout: string, proof: { verified: boolean } } | null } | null> };

export type PlayerBetsQueryVariables = Exact<{
  wallet: string;
  first?: number | null | undefined;
  after?: string | null | undefined;
  filter?: PlayerBetsFilter | null | undefined;
}>;


export type PlayerBetsQuery = { pendingBetCount: number, playerBets: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, tokenInfo: { address: string, symbol: string, decimals: number }, result: { outcome: string, won: boolean, payout: string, proof: { verified: boolean } } | null }> } };

export type LatestBetsQueryVariables = Exact<{
  first?: number | null | undefined;
}>;


export type LatestBetsQuery = { bets: { nodes: Array<{ chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, tokenInfo: { address: string, symbol: string, decimals: number }, result: { outcome: string, won: boolean, payout: string, proof: { verified: boolean } } | null }> } };

export type FairnessStatsQueryVariables = Exact<{
  chainId?: number | null | undefined;
  game?: string | null | undefined;
}>;


export type FairnessStatsQuery = { fairnessStats: Array<{ chainId: number, game: string, settledBets: string, wonBets: string, observedRtp: number, expectedRtp: number, outcomeHistogram: Array<string>, chiSquare: number, pValue: number, finalizedSettledBets: string }> };

export type PlayerBetsPageQueryVariables = Exact<{
  wallet: string;
  filter?: PlayerBetsFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  orderDirection?: OrderDirection | null | undefined;
  minBlock?: Array<MinBlock> | MinBlock | null | undefined;
}>;


export type PlayerBetsPageQuery = { playerBets: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, result: { outcome: string, won: boolean, payout: string, proof: { verified: boolean } } | null }> } };

export type BetsPageQueryVariables = Exact<{
  filter?: BetsFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  orderDirection?: OrderDirection | null | undefined;
  minBlock?: Array<MinBlock> | MinBlock | null | undefined;
}>;


export type BetsPageQuery = { bets: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, nodes: Array<{ chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, result: { outcome: string, won: boolean, payout: string, proof: { verified: boolean } } | null }> } };

export type BetsByTransactionQueryVariables = Exact<{
  chainId: number;
  txHash: string;
  minBlock?: Array<MinBlock> | MinBlock | null | undefined;
}>;


export type BetsByTransactionQuery = { betsByTransaction: Array<{ chainId: number, betId: string, player: string, token: string, stake: string, game: string, clientSeed: string, serverSeedHash: string, status: BetStatus, placedBlock: string, placedTx: string, placedAt: string, settledBlock: string | null, settledTx: string | null, settledAt: string | null, refundedBlock: string | null, refundedTx: string | null, refundedAt: string | null, confirmations: string, finalized: boolean, result: { outcome: string, won: boolean, payout: string, proof: { verified: boolean } } | null }> };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const BetFieldsFragmentDoc = new TypedDocumentString(`
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}
    `, {"fragmentName":"BetFields"}) as unknown as TypedDocumentString<BetFieldsFragment, unknown>;
export const TokenFieldsFragmentDoc = new TypedDocumentString(`
    fragment TokenFields on Token {
  address
  symbol
  decimals
}
    `, {"fragmentName":"TokenFields"}) as unknown as TypedDocumentString<TokenFieldsFragment, unknown>;
export const NetworksDocument = new TypedDocumentString(`
    query Networks {
  networkConfigs {
    chainId
    name
    confirmations
    contracts {
      name
      address
      deployBlock
    }
    indexing {
      indexedBlock
      headBlock
      finalizedBlock
      isReady
    }
  }
}
    `) as unknown as TypedDocumentString<NetworksQuery, NetworksQueryVariables>;
export const VerificationKeyDocument = new TypedDocumentString(`
    query VerificationKey($chainId: ChainId!) {
  networkConfigs(chainId: $chainId) {
    chainId
    verificationKey {
      protocol
      curve
      nPublic
      json
      sha256
    }
  }
}
    `) as unknown as TypedDocumentString<VerificationKeyQuery, VerificationKeyQueryVariables>;
export const BetWithProofDocument = new TypedDocumentString(`
    query BetWithProof($chainId: ChainId!, $betId: UInt256!) {
  betResult(chainId: $chainId, betId: $betId) {
    ...BetFields
    tokenInfo {
      ...TokenFields
    }
    result {
      proof {
        protocol
        curve
        piA
        piB
        piC
        publicSignals
        solidityCalldata
        verified
      }
    }
  }
}
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}
fragment TokenFields on Token {
  address
  symbol
  decimals
}`) as unknown as TypedDocumentString<BetWithProofQuery, BetWithProofQueryVariables>;
export const BetTokenDocument = new TypedDocumentString(`
    query BetToken($chainId: ChainId!, $betId: UInt256!) {
  betResult(chainId: $chainId, betId: $betId) {
    tokenInfo {
      ...TokenFields
    }
  }
}
    fragment TokenFields on Token {
  address
  symbol
  decimals
}`) as unknown as TypedDocumentString<BetTokenQuery, BetTokenQueryVariables>;
export const BetsDocument = new TypedDocumentString(`
    query Bets($chainId: ChainId!, $betIds: [UInt256!]!) {
  betResults(chainId: $chainId, betIds: $betIds) {
    ...BetFields
  }
}
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}`) as unknown as TypedDocumentString<BetsQuery, BetsQueryVariables>;
export const PlayerBetsDocument = new TypedDocumentString(`
    query PlayerBets($wallet: Address!, $first: Int, $after: String, $filter: PlayerBetsFilter) {
  playerBets(wallet: $wallet, first: $first, after: $after, filter: $filter) {
    totalCount
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      ...BetFields
      tokenInfo {
        ...TokenFields
      }
    }
  }
  pendingBetCount(wallet: $wallet)
}
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}
fragment TokenFields on Token {
  address
  symbol
  decimals
}`) as unknown as TypedDocumentString<PlayerBetsQuery, PlayerBetsQueryVariables>;
export const LatestBetsDocument = new TypedDocumentString(`
    query LatestBets($first: Int) {
  bets(first: $first) {
    nodes {
      ...BetFields
      tokenInfo {
        ...TokenFields
      }
    }
  }
}
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}
fragment TokenFields on Token {
  address
  symbol
  decimals
}`) as unknown as TypedDocumentString<LatestBetsQuery, LatestBetsQueryVariables>;
export const FairnessStatsDocument = new TypedDocumentString(`
    query FairnessStats($chainId: ChainId, $game: String) {
  fairnessStats(chainId: $chainId, game: $game) {
    chainId
    game
    settledBets
    wonBets
    observedRtp
    expectedRtp
    outcomeHistogram
    chiSquare
    pValue
    finalizedSettledBets
  }
}
    `) as unknown as TypedDocumentString<FairnessStatsQuery, FairnessStatsQueryVariables>;
export const PlayerBetsPageDocument = new TypedDocumentString(`
    query PlayerBetsPage($wallet: Address!, $filter: PlayerBetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {
  playerBets(
    wallet: $wallet
    filter: $filter
    first: $first
    after: $after
    orderDirection: $orderDirection
    minBlock: $minBlock
  ) {
    totalCount
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      ...BetFields
    }
  }
}
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}`) as unknown as TypedDocumentString<PlayerBetsPageQuery, PlayerBetsPageQueryVariables>;
export const BetsPageDocument = new TypedDocumentString(`
    query BetsPage($filter: BetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {
  bets(
    filter: $filter
    first: $first
    after: $after
    orderDirection: $orderDirection
    minBlock: $minBlock
  ) {
    totalCount
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      ...BetFields
    }
  }
}
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}`) as unknown as TypedDocumentString<BetsPageQuery, BetsPageQueryVariables>;
export const BetsByTransactionDocument = new TypedDocumentString(`
    query BetsByTransaction($chainId: ChainId!, $txHash: Bytes32!, $minBlock: [MinBlock!]) {
  betsByTransaction(chainId: $chainId, txHash: $txHash, minBlock: $minBlock) {
    ...BetFields
  }
}
    fragment BetFields on Bet {
  chainId
  betId
  player
  token
  stake
  game
  clientSeed
  serverSeedHash
  status
  placedBlock
  placedTx
  placedAt
  settledBlock
  settledTx
  settledAt
  refundedBlock
  refundedTx
  refundedAt
  confirmations
  finalized
  result {
    outcome
    won
    payout
    proof {
      verified
    }
  }
}`) as unknown as TypedDocumentString<BetsByTransactionQuery, BetsByTransactionQueryVariables>;