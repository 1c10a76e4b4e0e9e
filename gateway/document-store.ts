import { InMemoryLRUCache } from "@apollo/utils.keyvaluecache";
import type { DocumentNode } from "graphql";

// Apollo Server keeps every document it has parsed and validated, by the hash of its text, so a
// repeated text skips both. Its default store bounds itself at 30 MiB by each entry's JSON, which
// leaves out the text the document keeps (`loc.source`): a new `{ __typename }` behind a 62 KB
// comment was sized ~440 bytes, and 30 MiB of such entries held ~4 GB of text (an independent
// review, issue 21: RSS grew ~62 KB a document, never given back). Here an entry's size counts
// its text too.

/** What the document store holds at most, in bytes of documents and their texts (Apollo Server's own bound). */
export const DOCUMENT_STORE_BYTES = 30 * 2 ** 20;

/** An entry's size: the parsed document as Apollo sizes it, plus the text it keeps. */
export function documentSize(document: DocumentNode): number {
  return InMemoryLRUCache.sizeCalculation(document) + (document.loc?.source.body.length ?? 0);
}

/** Apollo Server's document store, bounded by what its entries really hold. */
export function createDocumentStore(maxBytes = DOCUMENT_STORE_BYTES): InMemoryLRUCache<DocumentNode> {
  return new InMemoryLRUCache<DocumentNode>({ maxSize: maxBytes, sizeCalculation: documentSize });
}
