/* eslint-disable */
import * as types from './graphql.ts';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment BetFields on Bet {\n    chainId\n    betId\n    player\n    token\n    stake\n    game\n    clientSeed\n    serverSeedHash\n    status\n    placedBlock\n    placedTx\n    placedAt\n    settledBlock\n    settledTx\n    settledAt\n    refundedBlock\n    refundedTx\n    refundedAt\n    confirmations\n    finalized\n    result {\n      outcome\n      won\n      payout\n      proof {\n        verified\n      }\n    }\n  }\n": typeof types.BetFieldsFragmentDoc,
    "\n  fragment TokenFields on Token {\n    address\n    symbol\n    decimals\n  }\n": typeof types.TokenFieldsFragmentDoc,
    "\n  query Networks {\n    networkConfigs {\n      chainId\n      name\n      confirmations\n      contracts {\n        name\n        address\n        deployBlock\n      }\n      indexing {\n        indexedBlock\n        headBlock\n        finalizedBlock\n        isReady\n      }\n    }\n  }\n": typeof types.NetworksDocument,
    "\n  query VerificationKey($chainId: ChainId!) {\n    networkConfigs(chainId: $chainId) {\n      chainId\n      verificationKey {\n        protocol\n        curve\n        nPublic\n        json\n        sha256\n      }\n    }\n  }\n": typeof types.VerificationKeyDocument,
    "\n  query BetWithProof($chainId: ChainId!, $betId: UInt256!) {\n    betResult(chainId: $chainId, betId: $betId) {\n      ...BetFields\n      tokenInfo {\n        ...TokenFields\n      }\n      result {\n        proof {\n          protocol\n          curve\n          piA\n          piB\n          piC\n          publicSignals\n          solidityCalldata\n          verified\n        }\n      }\n    }\n  }\n": typeof types.BetWithProofDocument,
    "\n  query BetToken($chainId: ChainId!, $betId: UInt256!) {\n    betResult(chainId: $chainId, betId: $betId) {\n      tokenInfo {\n        ...TokenFields\n      }\n    }\n  }\n": typeof types.BetTokenDocument,
    "\n  query Bets($chainId: ChainId!, $betIds: [UInt256!]!) {\n    betResults(chainId: $chainId, betIds: $betIds) {\n      ...BetFields\n    }\n  }\n": typeof types.BetsDocument,
    "\n  query PlayerBets($wallet: Address!, $first: Int, $after: String, $filter: PlayerBetsFilter) {\n    playerBets(wallet: $wallet, first: $first, after: $after, filter: $filter) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n        tokenInfo {\n          ...TokenFields\n        }\n      }\n    }\n    pendingBetCount(wallet: $wallet)\n  }\n": typeof types.PlayerBetsDocument,
    "\n  query LatestBets($first: Int) {\n    bets(first: $first) {\n      nodes {\n        ...BetFields\n        tokenInfo {\n          ...TokenFields\n        }\n      }\n    }\n  }\n": typeof types.LatestBetsDocument,
    "\n  query FairnessStats($chainId: ChainId, $game: String) {\n    fairnessStats(chainId: $chainId, game: $game) {\n      chainId\n      game\n      settledBets\n      wonBets\n      observedRtp\n      expectedRtp\n      outcomeHistogram\n      chiSquare\n      pValue\n      finalizedSettledBets\n    }\n  }\n": typeof types.FairnessStatsDocument,
    "\n  query PlayerBetsPage($wallet: Address!, $filter: PlayerBetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {\n    playerBets(wallet: $wallet, filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n      }\n    }\n  }\n": typeof types.PlayerBetsPageDocument,
    "\n  query BetsPage($filter: BetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {\n    bets(filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n      }\n    }\n  }\n": typeof types.BetsPageDocument,
    "\n  query BetsByTransaction($chainId: ChainId!, $txHash: Bytes32!, $minBlock: [MinBlock!]) {\n    betsByTransaction(chainId: $chainId, txHash: $txHash, minBlock: $minBlock) {\n      ...BetFields\n    }\n  }\n": typeof types.BetsByTransactionDocument,
};
const documents: Documents = {
    "\n  fragment BetFields on Bet {\n    chainId\n    betId\n    player\n    token\n    stake\n    game\n    clientSeed\n    serverSeedHash\n    status\n    placedBlock\n    placedTx\n    placedAt\n    settledBlock\n    settledTx\n    settledAt\n    refundedBlock\n    refundedTx\n    refundedAt\n    confirmations\n    finalized\n    result {\n      outcome\n      won\n      payout\n      proof {\n        verified\n      }\n    }\n  }\n": types.BetFieldsFragmentDoc,
    "\n  fragment TokenFields on Token {\n    address\n    symbol\n    decimals\n  }\n": types.TokenFieldsFragmentDoc,
    "\n  query Networks {\n    networkConfigs {\n      chainId\n      name\n      confirmations\n      contracts {\n        name\n        address\n        deployBlock\n      }\n      indexing {\n        indexedBlock\n        headBlock\n        finalizedBlock\n        isReady\n      }\n    }\n  }\n": types.NetworksDocument,
    "\n  query VerificationKey($chainId: ChainId!) {\n    networkConfigs(chainId: $chainId) {\n      chainId\n      verificationKey {\n        protocol\n        curve\n        nPublic\n        json\n        sha256\n      }\n    }\n  }\n": types.VerificationKeyDocument,
    "\n  query BetWithProof($chainId: ChainId!, $betId: UInt256!) {\n    betResult(chainId: $chainId, betId: $betId) {\n      ...BetFields\n      tokenInfo {\n        ...TokenFields\n      }\n      result {\n        proof {\n          protocol\n          curve\n          piA\n          piB\n          piC\n          publicSignals\n          solidityCalldata\n          verified\n        }\n      }\n    }\n  }\n": types.BetWithProofDocument,
    "\n  query BetToken($chainId: ChainId!, $betId: UInt256!) {\n    betResult(chainId: $chainId, betId: $betId) {\n      tokenInfo {\n        ...TokenFields\n      }\n    }\n  }\n": types.BetTokenDocument,
    "\n  query Bets($chainId: ChainId!, $betIds: [UInt256!]!) {\n    betResults(chainId: $chainId, betIds: $betIds) {\n      ...BetFields\n    }\n  }\n": types.BetsDocument,
    "\n  query PlayerBets($wallet: Address!, $first: Int, $after: String, $filter: PlayerBetsFilter) {\n    playerBets(wallet: $wallet, first: $first, after: $after, filter: $filter) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n        tokenInfo {\n          ...TokenFields\n        }\n      }\n    }\n    pendingBetCount(wallet: $wallet)\n  }\n": types.PlayerBetsDocument,
    "\n  query LatestBets($first: Int) {\n    bets(first: $first) {\n      nodes {\n        ...BetFields\n        tokenInfo {\n          ...TokenFields\n        }\n      }\n    }\n  }\n": types.LatestBetsDocument,
    "\n  query FairnessStats($chainId: ChainId, $game: String) {\n    fairnessStats(chainId: $chainId, game: $game) {\n      chainId\n      game\n      settledBets\n      wonBets\n      observedRtp\n      expectedRtp\n      outcomeHistogram\n      chiSquare\n      pValue\n      finalizedSettledBets\n    }\n  }\n": types.FairnessStatsDocument,
    "\n  query PlayerBetsPage($wallet: Address!, $filter: PlayerBetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {\n    playerBets(wallet: $wallet, filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n      }\n    }\n  }\n": types.PlayerBetsPageDocument,
    "\n  query BetsPage($filter: BetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {\n    bets(filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n      }\n    }\n  }\n": types.BetsPageDocument,
    "\n  query BetsByTransaction($chainId: ChainId!, $txHash: Bytes32!, $minBlock: [MinBlock!]) {\n    betsByTransaction(chainId: $chainId, txHash: $txHash, minBlock: $minBlock) {\n      ...BetFields\n    }\n  }\n": types.BetsByTransactionDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment BetFields on Bet {\n    chainId\n    betId\n    player\n    token\n    stake\n    game\n    clientSeed\n    serverSeedHash\n    status\n    placedBlock\n    placedTx\n    placedAt\n    settledBlock\n    settledTx\n    settledAt\n    refundedBlock\n    refundedTx\n    refundedAt\n    confirmations\n    finalized\n    result {\n      outcome\n      won\n      payout\n      proof {\n        verified\n      }\n    }\n  }\n"): typeof import('./graphql.ts').BetFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment TokenFields on Token {\n    address\n    symbol\n    decimals\n  }\n"): typeof import('./graphql.ts').TokenFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Networks {\n    networkConfigs {\n      chainId\n      name\n      confirmations\n      contracts {\n        name\n        address\n        deployBlock\n      }\n      indexing {\n        indexedBlock\n        headBlock\n        finalizedBlock\n        isReady\n      }\n    }\n  }\n"): typeof import('./graphql.ts').NetworksDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query VerificationKey($chainId: ChainId!) {\n    networkConfigs(chainId: $chainId) {\n      chainId\n      verificationKey {\n        protocol\n        curve\n        nPublic\n        json\n        sha256\n      }\n    }\n  }\n"): typeof import('./graphql.ts').VerificationKeyDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query BetWithProof($chainId: ChainId!, $betId: UInt256!) {\n    betResult(chainId: $chainId, betId: $betId) {\n      ...BetFields\n      tokenInfo {\n        ...TokenFields\n      }\n      result {\n        proof {\n          protocol\n          curve\n          piA\n          piB\n          piC\n          publicSignals\n          solidityCalldata\n          verified\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').BetWithProofDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query BetToken($chainId: ChainId!, $betId: UInt256!) {\n    betResult(chainId: $chainId, betId: $betId) {\n      tokenInfo {\n        ...TokenFields\n      }\n    }\n  }\n"): typeof import('./graphql.ts').BetTokenDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Bets($chainId: ChainId!, $betIds: [UInt256!]!) {\n    betResults(chainId: $chainId, betIds: $betIds) {\n      ...BetFields\n    }\n  }\n"): typeof import('./graphql.ts').BetsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PlayerBets($wallet: Address!, $first: Int, $after: String, $filter: PlayerBetsFilter) {\n    playerBets(wallet: $wallet, first: $first, after: $after, filter: $filter) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n        tokenInfo {\n          ...TokenFields\n        }\n      }\n    }\n    pendingBetCount(wallet: $wallet)\n  }\n"): typeof import('./graphql.ts').PlayerBetsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LatestBets($first: Int) {\n    bets(first: $first) {\n      nodes {\n        ...BetFields\n        tokenInfo {\n          ...TokenFields\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').LatestBetsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FairnessStats($chainId: ChainId, $game: String) {\n    fairnessStats(chainId: $chainId, game: $game) {\n      chainId\n      game\n      settledBets\n      wonBets\n      observedRtp\n      expectedRtp\n      outcomeHistogram\n      chiSquare\n      pValue\n      finalizedSettledBets\n    }\n  }\n"): typeof import('./graphql.ts').FairnessStatsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PlayerBetsPage($wallet: Address!, $filter: PlayerBetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {\n    playerBets(wallet: $wallet, filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n      }\n    }\n  }\n"): typeof import('./graphql.ts').PlayerBetsPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query BetsPage($filter: BetsFilter, $first: Int, $after: String, $orderDirection: OrderDirection, $minBlock: [MinBlock!]) {\n    bets(filter: $filter, first: $first, after: $after, orderDirection: $orderDirection, minBlock: $minBlock) {\n      totalCount\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n      nodes {\n        ...BetFields\n      }\n    }\n  }\n"): typeof import('./graphql.ts').BetsPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query BetsByTransaction($chainId: ChainId!, $txHash: Bytes32!, $minBlock: [MinBlock!]) {\n    betsByTransaction(chainId: $chainId, txHash: $txHash, minBlock: $minBlock) {\n      ...BetFields\n    }\n  }\n"): typeof import('./graphql.ts').BetsByTransactionDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
