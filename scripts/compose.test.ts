import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../core/config.ts";
import { loadIndexerEnv, loadNetworksConfig } from "../indexer/config.ts";
import { loadRealtimeConfig } from "../realtime/config.ts";
import { REALTIME_PATH } from "../realtime/events.ts";

// No Docker engine runs on these machines, so docker-compose.yml is validated here instead:
// it parses, every service's command names a file of this repository, every dependency is a
// service, and every service's environment passes the services' own configuration validation.

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  image?: string;
  build?: string;
  volumes?: string[];
}

const compose = parse(readFileSync("docker-compose.yml", "utf8"), { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);
const ours = services.filter(([, service]) => service.build === ".");

describe("docker-compose.yml", () => {
  it("has the production topology", () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(["postgres", "redis", "migrate", "networks", "results", "history", "gateway-a", "gateway-b", "indexer", "realtime-a", "realtime-b", "publisher", "proxy"]));
    expect(existsSync("Dockerfile")).toBe(true);
  });

  it("gives the indexer a networks file and an environment it accepts", () => {
    const environment = compose.services.indexer!.environment!;
    expect(environment.NETWORKS_CONFIG).toBe("/config/networks.json");
    expect(loadNetworksConfig("deploy/networks.json").map((n) => n.chainId)).toEqual([31337]);
    expect(loadIndexerEnv(environment)).toMatchObject({ HOST: "0.0.0.0", METRICS_PORT: 9464 });
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

describe("deploy/nginx.conf (the reverse proxy)", () => {
  const proxy = compose.services.proxy!;
  const nginx = readFileSync("deploy/nginx.conf", "utf8");
  const upstream = (name: string) => {
    const block = new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(nginx)?.[1] ?? "";
    return [...block.matchAll(/server ([a-z0-9-]+):(\d+)/g)].map((m) => ({ service: m[1]!, port: m[2]! }));
  };
  const location = (path: string) => new RegExp(`location ${path.replace(/[/]/g, "\\/")} \\{([^}]*)\\}`).exec(nginx)?.[1] ?? "";

  it("is the compose proxy's configuration", () => {
    expect(proxy.volumes).toContain("./deploy/nginx.conf:/etc/nginx/nginx.conf:ro");
  });

  it("balances over both gateway replicas and both realtime nodes, on the ports they listen on", () => {
    for (const [name, services] of [["gateways", ["gateway-a", "gateway-b"]], ["realtime", ["realtime-a", "realtime-b"]]] as const) {
      const servers = upstream(name);
      expect(servers.map((s) => s.service)).toEqual(services);
      for (const { service, port } of servers) expect(compose.services[service]!.environment!.PORT).toBe(port);
    }
  });

  it("upgrades WebSockets on the realtime path with timeouts above ping interval + timeout", () => {
    const realtimePath = loadRealtimeConfig(compose.services["realtime-a"]!.environment!).REALTIME_PATH ?? REALTIME_PATH.dedicated;
    const ws = location(`${realtimePath}/`);
    expect(ws).toContain("proxy_pass http://realtime;");
    expect(ws).toContain("proxy_set_header Upgrade $http_upgrade;");
    expect(ws).toContain("proxy_set_header Connection $connection_upgrade;");
    const { REALTIME_PING_INTERVAL_MS, REALTIME_PING_TIMEOUT_MS } = loadRealtimeConfig(compose.services["realtime-a"]!.environment!);
    const readTimeout = Number(/proxy_read_timeout (\d+)s;/.exec(ws)?.[1]);
    expect(readTimeout * 1000).toBeGreaterThan(REALTIME_PING_INTERVAL_MS + REALTIME_PING_TIMEOUT_MS);
  });

  it("passes the client address the gateways trust, and keeps /metrics internal", () => {
    expect(nginx).toContain("proxy_set_header X-Forwarded-For $remote_addr;");
    for (const name of ["gateway-a", "gateway-b"]) expect(loadConfig(compose.services[name]!.environment!).TRUST_PROXY_HOPS).toBe(1);
    expect(location("= /metrics")).toContain("return 404;");
    expect(location("/")).toContain("proxy_pass http://gateways;");
  });
});
