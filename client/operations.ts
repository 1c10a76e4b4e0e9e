// Every GraphQL operation the client package ships, typed by `npm run codegen` (client preset,
// from the committed supergraph's API schema). `graphql(...)` returns a TypedDocumentString: the
// operation text plus its result and variable types, so `request(doc, vars)` checks both and needs
// no GraphQL runtime in the browser.
import { graphql } from "./generated/gql.ts";

/** The fields of an indexed bet every view needs (the proof is fetched on its own: it is large). */
export const betFieldsFragment = graphql(`
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
`);

/** A token's symbol and decimals: what formatAmount needs to show a bet's amounts. */
export const tokenFieldsFragment = graphql(`
  fragment TokenFields on Token {
    address
    symbol
    decimals
  }
`);

export const networksQuery = graphql(`
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
`);

/** What a client needs to verify proofs itself; `json` is the snarkjs verification key as served. */
export const verificationKeyQuery = graphql(`
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
`);

/** One bet with its Groth16 proof. */
export const betWithProofQuery = graphql(`
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
`);

/** A bet's token (symbol and decimals), for a bet known only from the feed (its payload has the address only). */
export const betTokenQuery = graphql(`
  query BetToken($chainId: ChainId!, $betId: UInt256!) {
    betResult(chainId: $chainId, betId: $betId) {
      tokenInfo {
        ...TokenFields
      }
    }
  }
`);

/** Several bets of one chain at once (≤ 100 ids), in the order asked; null where unknown. */
export const betsQuery = graphql(`
  query Bets($chainId: ChainId!, $betIds: [UInt256!]!) {
    betResults(chainId: $chainId, betIds: $betIds) {
      ...BetFields
    }
  }
`);

/** A wallet's history, newest first, a page at a time (pass `endCursor` as `after`). */
export const playerBetsQuery = graphql(`
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
`);

/** The newest bets of every wallet on every network (`bets`, newest first by placement), for a live view to start from. */
export const latestBetsQuery = graphql(`
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
`);

/** Per network and game: the settled bets' return to player against the rule's, and their outcome histogram. */
export const fairnessStatsQuery = graphql(`
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
`);

/** One page of a wallet's history with filters (`loadMore` / pageThrough walk it), optionally not before a block per network. */
export const playerBetsPageQuery = graphql(`
  query PlayerBetsPage($wallet: Address!, $filter: PlayerBetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {
    playerBets(wallet: $wallet, filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {
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
`);

/** One page of every wallet's bets (the explorer) with filters, optionally not before a block per network. */
export const betsPageQuery = graphql(`
  query BetsPage($filter: BetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {
    bets(filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {
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
`);

/** The bets placed, settled or refunded in one transaction, answered only once block `minBlock` is indexed (waitForBet). */
export const betsByTransactionQuery = graphql(`
  query BetsByTransaction($chainId: ChainId!, $txHash: Bytes32!, $minBlock: [MinBlock!]) {
    betsByTransaction(chainId: $chainId, txHash: $txHash, minBlock: $minBlock) {
      ...BetFields
    }
  }
`);
