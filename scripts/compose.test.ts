import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../core/config.ts";
import { loadNetworksConfig } from "../indexer/config.ts";

// No Docker engine runs on these machines, so docker-compose.yml is validated here instead:
// it parses, every service's command names a file of this repository, every dependency is a
// service, and every service's environment passes the services' own configuration validation.

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  image?: string;
  build?: string;
}

const compose = parse(readFileSync("docker-compose.yml", "utf8"), { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);
const ours = services.filter(([, service]) => service.build === ".");

describe("docker-compose.yml", () => {
  it("has the production topology", () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(["postgres", "redis", "migrate", "networks", "results", "history", "gateway", "indexer", "realtime-a", "realtime-b", "publisher"]));
    expect(existsSync("Dockerfile")).toBe(true);
  });

  it("gives the indexer a networks file it accepts", () => {
    expect(compose.services.indexer!.environment!.NETWORKS_CONFIG).toBe("/config/networks.json");
    expect(loadNetworksConfig("deploy/networks.json").map((n) => n.chainId)).toEqual([31337]);
  });

  it.each(ours)("%s runs a file that exists", (_name, service) => {
    const [runner, tool, file] = service.command ?? [];
    expect([runner, tool]).toEqual(["npx", "tsx"]);
    expect(existsSync(file!), `${file} is missing`).toBe(true);
  });

  it.each(services.filter(([, s]) => s.depends_on))("%s depends only on services that exist", (_name, service) => {
    for (const dependency of Object.keys(service.depends_on!)) expect(compose.services).toHaveProperty(dependency);
  });

  it.each(ours.filter(([name]) => name !== "migrate"))("%s has an environment the configuration accepts", (_name, service) => {
    const config = loadConfig(service.environment ?? {});
    expect(config.NODE_ENV).toBe("production");
    expect(config.HOST).toBe("0.0.0.0");
    expect(config.DATABASE_URL).toMatch(/^postgresql:\/\/.*@postgres:5432\//);
  });
});
