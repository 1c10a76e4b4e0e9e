import { InMemoryLRUCache } from "@apollo/utils.keyvaluecache";
import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { createDocumentStore, documentSize } from "./document-store.ts";

// Apollo Server's document store (gateway/document-store.ts): bounded by the text its documents keep.

const COMMENT = 62_000;
const padded = (i: number) => parse(`# ${i} ${"x".repeat(COMMENT)}\n{ __typename }`);

describe("the document store", () => {
  it("sizes a document with the text it keeps", () => {
    const document = padded(1);
    expect(documentSize(document)).toBeGreaterThan(COMMENT);
    // Apollo's own sizing (its default store's) leaves the text out.
    expect(InMemoryLRUCache.sizeCalculation(document)).toBeLessThan(1_000);
  });

  it("keeps no more text than its bound, however small the documents' tokens", async () => {
    const maxBytes = 2 ** 20;
    const store = createDocumentStore(maxBytes);
    for (let i = 0; i < 100; i++) await store.set(`k${i}`, padded(i));
    let kept = 0;
    let bytes = 0;
    for (let i = 0; i < 100; i++) {
      const document = await store.get(`k${i}`);
      if (!document) continue;
      kept++;
      bytes += document.loc?.source.body.length ?? 0;
    }
    expect(bytes).toBeLessThanOrEqual(maxBytes);
    expect(kept).toBeGreaterThan(0);
    // The newest are the ones kept.
    expect(await store.get("k99")).toBeDefined();
    expect(await store.get("k0")).toBeUndefined();
  });
});
