import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { composeWith } from "../test/registry.ts";
import { artifactOf, writeArtifact } from "./schema-publish.ts";

// `npm run schema:publish`: the artifact a registry's CDN serves to gateways (SUPERGRAPH_URL).

const committed = readFileSync("supergraph.graphql", "utf8");
const dir = mkdtempSync(join(tmpdir(), "publish-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("schema:publish", () => {
  it("writes the supergraph, its SHA-256 and the public SDL, the same bytes each time", () => {
    const artifact = artifactOf(committed);
    expect(artifact.hash).toBe(createHash("sha256").update(committed).digest("hex"));
    expect(artifact.subgraphs).toEqual(["networks", "results", "history", "health"]);
    writeArtifact(dir, artifact);
    const first = ["supergraph.graphql", "schema.graphql", "hash", "artifact.json"].map((name) => readFileSync(join(dir, name), "utf8"));
    writeArtifact(dir, artifactOf(committed));
    expect(["supergraph.graphql", "schema.graphql", "hash", "artifact.json"].map((name) => readFileSync(join(dir, name), "utf8"))).toEqual(first);
    expect(first[0]).toBe(committed);
    expect(first[1]).toContain("type Query");
    expect(first[1]).not.toMatch(/join__|@link|_entities/);
    expect(first[2]).toBe(`${artifact.hash}\n`);
    expect(JSON.parse(first[3]!)).toEqual(artifact);
  });

  it("refuses what a gateway would refuse: a supergraph without one of the subgraphs", () => {
    expect(() => artifactOf(composeWith({ omit: ["history"] }))).toThrow("not publishable: it lacks subgraph history that this gateway routes to");
    expect(() => artifactOf("type Query { a: Int }")).toThrow(/^not publishable: it does not parse as a supergraph/);
  });
});
