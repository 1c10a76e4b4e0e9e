import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../core/config.ts";
import { supergraphRoutingUrls } from "../gateway/server.ts";
import { SUBGRAPHS, subgraphNamed } from "./registry.ts";

// The registry is the one list of subgraphs: the configuration's routing variables, the committed
// supergraph and each entry's own factory must agree with it (docker-compose.yml is checked
// against it in scripts/compose.test.ts; codegen and composition read it).

describe("subgraphs/registry.ts", () => {
  it("names each subgraph, SDL file, port and routing variable once", () => {
    for (const key of ["name", "sdl", "urlVariable", "defaultPort"] as const) {
      const values = SUBGRAPHS.map((subgraph) => subgraph[key]);
      expect(new Set(values).size, key).toBe(values.length);
    }
    for (const { sdl } of SUBGRAPHS) expect(existsSync(sdl), sdl).toBe(true);
    expect(subgraphNamed("history")?.name).toBe("history");
    expect(subgraphNamed("health")).toBeUndefined();
  });

  it("has exactly the routing URL variables of the configuration's subgraphs section", () => {
    const declared = Object.entries(CONFIG_VARIABLES)
      .filter(([, variable]) => variable.section === "subgraphs")
      .map(([name]) => name);
    expect(declared.sort()).toEqual(SUBGRAPHS.map((subgraph) => subgraph.urlVariable).sort());
  });

  it("is what the committed supergraph routes to by default", () => {
    const routing = supergraphRoutingUrls(readFileSync("supergraph.graphql", "utf8"));
    const { health, ...subgraphs } = routing;
    expect(health).toBeDefined();
    expect(subgraphs).toEqual(Object.fromEntries(SUBGRAPHS.map(({ name, defaultPort }) => [name, `http://127.0.0.1:${defaultPort}/graphql`])));
  });

  it("loads each entry's own factory", async () => {
    for (const subgraph of SUBGRAPHS) expect((await subgraph.load()).subgraphName).toBe(subgraph.name);
  });
});
