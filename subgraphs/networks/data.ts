import type { Database } from "../../core/db.ts";
import type { Contract, IndexingCursor, Network } from "../../prisma/generated/client.ts";

// Every statement of the networks subgraph: one table each, a whole DataLoader batch per statement.

const toBigInts = (chainIds: readonly number[]) => chainIds.map(BigInt);

export function allNetworks(db: Database): Promise<Network[]> {
  return db.prisma.network.findMany({ orderBy: { chainId: "asc" } });
}

export function networksOf(db: Database, chainIds: readonly number[]): Promise<Network[]> {
  return db.prisma.network.findMany({ where: { chainId: { in: toBigInts(chainIds) } } });
}

export function contractsOf(db: Database, chainIds: readonly number[]): Promise<Contract[]> {
  return db.prisma.contract.findMany({ where: { chainId: { in: toBigInts(chainIds) } }, orderBy: { name: "asc" } });
}

export function indexingCursorsOf(db: Database, chainIds: readonly number[]): Promise<IndexingCursor[]> {
  return db.prisma.indexingCursor.findMany({ where: { chainId: { in: toBigInts(chainIds) } } });
}

/** Every network's cursor: the heads an answer was read at, when the request's were not recorded (kit/read-at.ts). */
export function allIndexingCursors(db: Database): Promise<IndexingCursor[]> {
  return db.prisma.indexingCursor.findMany();
}
