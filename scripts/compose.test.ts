import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.ts";
import { loadNetworksConfig } from "../indexer/config.ts";
import { SUBGRAPHS } from "../subgraphs/registry.ts";
import { cursorSecretProblem, REALTIME_SECTIONS } from "../bin/wiring.ts";
import { REQUEST_POINTS } from "../gateway/points-budget.ts";
import { type ComposeService, connectionBudget, interpolate, loadCompose, SUPERUSER_RESERVED_CONNECTIONS } from "../test/compose.ts";

// No Docker engine runs on these machines, so docker-compose.yml is validated here instead:
// it parses, every service's command names a file of this repository, every dependency is a
// service, every service's environment passes the configuration's validation, and the subgraph
// services are those of subgraphs/registry.ts.

const compose = loadCompose();
const services = Object.entries(compose.services);
const ours = services.filter(([, service]) => service.build === ".");
/** Services that run until stopped (not the one-shot migration). */
const longRunning = services.filter(([name]) => name !== "migrate");

describe("docker-compose.yml", () => {
  it("has the production topology", () => {
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining([
        "postgres",
        "redis",
        "redis-cache",
        "migrate",
        "networks",
        "results",
        "history",
        "gateway-a",
        "gateway-b",
        "indexer",
        "realtime-a",
        "realtime-b",
        "publisher",
        "proxy",
      ]),
    );
    expect(existsSync("Dockerfile")).toBe(true);
  });

  it("gives the indexer a networks file and an environment it accepts", () => {
    const environment = compose.services.indexer!.environment!;
    expect(environment.NETWORKS_CONFIG).toBe("/config/networks.json");
    expect(loadNetworksConfig("deploy/networks.json").map((n) => n.chainId)).toEqual([31337]);
    expect(loadConfig(["shared", "indexer"], environment)).toMatchObject({ HOST: "0.0.0.0", METRICS_PORT: 9464, NETWORKS_CONFIG: "/config/networks.json" });
  });

  it.each(ours)("%s runs a file that exists", (_name, service) => {
    // node itself (its own type stripping, bin/typescript.mjs): the container's main process is node and gets SIGTERM (not npx).
    const [runner, hook, file] = service.command ?? [];
    expect([runner, hook]).toEqual(["node", "--import=./bin/typescript.mjs"]);
    expect(existsSync(file!), `${file} is missing`).toBe(true);
  });

  it.each(services.filter(([, s]) => s.depends_on))("%s depends only on services that exist", (_name, service) => {
    for (const dependency of Object.keys(service.depends_on!)) expect(compose.services).toHaveProperty(dependency);
  });

  it.each(SUBGRAPHS)(
    "runs the $name subgraph as `bin/subgraph.ts $name` on its registry port, where the gateways route",
    ({ name, urlVariable, defaultPort }) => {
      const service = compose.services[name]!;
      expect(service.command).toEqual(["node", "--import=./bin/typescript.mjs", "bin/subgraph.ts", name]);
      expect(service.environment?.PORT).toBe(String(defaultPort));
      for (const gateway of ["gateway-a", "gateway-b"]) {
        expect(compose.services[gateway]!.environment![urlVariable]).toBe(`http://${name}:${defaultPort}/graphql`);
        expect(compose.services[gateway]!.depends_on).toHaveProperty(name);
      }
    },
  );

  it("runs no subgraph and routes to none that the registry does not list", () => {
    const names = SUBGRAPHS.map((subgraph) => subgraph.name);
    const run = ours.filter(([, service]) => service.command?.[2] === "bin/subgraph.ts").map(([, service]) => service.command?.[3]);
    expect(run.sort()).toEqual([...names].sort());
    const routed = Object.keys(compose.services["gateway-a"]!.environment!).filter((variable) => variable.endsWith("_SUBGRAPH_URL"));
    expect(routed.sort()).toEqual(SUBGRAPHS.map((subgraph) => subgraph.urlVariable).sort());
  });

  it.each(ours.filter(([name, service]) => name !== "migrate" && !service.profiles))("%s has an environment the configuration accepts", (_name, service) => {
    const config = loadConfig(["shared", "gateway", "subgraphs", ...REALTIME_SECTIONS, "indexer"], service.environment ?? {});
    expect(config.NODE_ENV).toBe("production");
    expect(config.HOST).toBe("0.0.0.0");
    expect(config.DATABASE_URL).toMatch(/^postgresql:\/\/.*@postgres:5432\//);
  });
});

describe("docker-compose.yml's Redis servers", () => {
  const flag = (service: string, name: string) => {
    const command = compose.services[service]!.command!;
    const at = command.indexOf(`--${name}`);
    return at < 0 ? undefined : command[at + 1];
  };

  it("keeps the response cache in a Redis of its own, bounded and evicting least recently used answers", () => {
    expect(flag("redis-cache", "maxmemory")).toMatch(/^\d+(mb|gb)$/);
    expect(flag("redis-cache", "maxmemory-policy")).toBe("allkeys-lru");
    for (const gateway of ["gateway-a", "gateway-b"]) {
      const config = loadConfig(["shared", "gateway"], compose.services[gateway]!.environment!);
      expect(new URL(config.RESPONSE_CACHE_REDIS_URL!).host).toBe("redis-cache:6379");
      expect(new URL(config.REDIS_URL!).host).toBe("redis:6379");
      expect(compose.services[gateway]!.depends_on!["redis-cache"]).toEqual({ condition: "service_healthy" });
    }
  });

  it("never evicts the rate limit's and realtime's keys, and nothing else uses the cache's Redis", () => {
    expect(flag("redis", "maxmemory-policy")).toBe("noeviction");
    for (const [name, service] of services) {
      if (name.startsWith("gateway-")) continue;
      expect(JSON.stringify(service.environment ?? {}), name).not.toContain("redis-cache");
    }
  });
});

describe("docker-compose.yml's cursor secret", () => {
  it("is required from the operator's .env (no default: a public one would let anyone mint cursors)", () => {
    expect(() => interpolate(readFileSync("docker-compose.yml", "utf8"), {})).toThrow(/CURSOR_SECRET/);
    const history = loadCompose("docker-compose.yml", { CURSOR_SECRET: "an operator's own secret" }).services.history!.environment!;
    const config = loadConfig(["shared"], history);
    expect(config.CURSOR_SECRET).toBe("an operator's own secret");
    expect(cursorSecretProblem(config)).toBeUndefined();
  });

  it("passes a previous secret during a rotation", () => {
    const history = loadCompose("docker-compose.yml", { CURSOR_SECRET: "the secret from today", CURSOR_SECRET_PREVIOUS: "the secret until today" }).services
      .history!.environment!;
    expect(loadConfig(["shared"], history)).toMatchObject({ CURSOR_SECRET: "the secret from today", CURSOR_SECRET_PREVIOUS: "the secret until today" });
  });
});

describe("docker-compose.yml runs as shipped", () => {
  const profileOf = (name: string) => compose.services[name]?.profiles ?? [];

  it.each(longRunning)("%s has a healthcheck", (_name, service) => {
    expect(service.healthcheck?.test?.[0]).toMatch(/^CMD(-SHELL)?$/);
    expect(service.healthcheck!.test.length).toBeGreaterThan(1);
  });

  it.each(ours.filter(([name, service]) => name !== "migrate" && (service.environment?.PORT || service.environment?.METRICS_PORT)))(
    "%s's healthcheck asks the port it listens on",
    (_name, service) => {
      const [, runner, script, url] = service.healthcheck!.test;
      expect([runner, script]).toEqual(["node", "deploy/healthcheck.mjs"]);
      const port = new URL(url!).port;
      expect([service.environment!.PORT, service.environment!.METRICS_PORT]).toContain(port);
      // Readiness, not /metrics or /health: a process that runs but cannot serve (no database) is not healthy (core/probes.ts).
      expect(new URL(url!).pathname).toBe("/readyz");
    },
  );

  it.each(services.filter(([, service]) => service.depends_on))("%s waits for its dependencies' health, or the migration's completion", (name, service) => {
    for (const [dependency, { condition }] of Object.entries(service.depends_on!)) {
      expect(condition, `${name} → ${dependency}`).toBe(dependency === "migrate" ? "service_completed_successfully" : "service_healthy");
      // A dependency inside a profile would make the service fail to start when the profile is off.
      for (const profile of profileOf(dependency)) expect(profileOf(name), `${name} → ${dependency} (profile ${profile})`).toContain(profile);
    }
  });

  it("points the example networks file at a chain service of the compose file", () => {
    const { hostname, port } = new URL(loadNetworksConfig("deploy/networks.json")[0]!.rpc.http);
    expect(compose.services).toHaveProperty(hostname);
    expect(compose.services[hostname]!.entrypoint).toEqual(expect.arrayContaining(["anvil", "--host", "0.0.0.0"]));
    expect(port).toBe("8545");
  });

  it("gives each service the database role of its work: the migrator migrates, the indexer and publishers write, the rest read", () => {
    const userOf = (name: string) => new URL(compose.services[name]!.environment!.DATABASE_URL!).username;
    expect(userOf("migrate")).toBe("bets_migrator");
    for (const name of ["indexer", "publisher"]) expect(userOf(name)).toBe("bets_writer");
    for (const [name, service] of ours) {
      if (["migrate", "indexer", "publisher"].includes(name) || !service.environment?.DATABASE_URL) continue;
      expect(userOf(name), name).toBe("bets_reader");
    }
    for (const [name, service] of ours.filter(([n]) => n !== "migrate")) {
      if (!service.environment?.DATABASE_URL) continue;
      expect(loadConfig(["shared"], service.environment).DATABASE_MIGRATE_ON_START, name).toBe(false);
    }
    const postgres = compose.services.postgres!;
    expect(postgres.volumes).toEqual(
      expect.arrayContaining([
        "./deploy/postgres/init-roles.sh:/docker-entrypoint-initdb.d/10-roles.sh:ro",
        "./deploy/postgres/roles.sql:/etc/bet-results/roles.sql:ro",
      ]),
    );
  });

  it("keeps the whole topology's PostgreSQL connections under max_connections", () => {
    const maxConnections = Number(/max_connections=(\d+)/.exec(compose.services.postgres!.command!.join(" "))?.[1]);
    const budget = connectionBudget(compose);
    expect(maxConnections).toBeGreaterThan(0);
    expect(budget).toBeLessThanOrEqual(maxConnections - SUPERUSER_RESERVED_CONNECTIONS);
    // The figure the compose file's header states.
    expect(readFileSync("docker-compose.yml", "utf8")).toContain(`=  ${budget} of ${maxConnections - SUPERUSER_RESERVED_CONNECTIONS}.`);
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
    for (const [name, services] of [
      ["gateways", ["gateway-a", "gateway-b"]],
      ["realtime", ["realtime-a", "realtime-b"]],
    ] as const) {
      const servers = upstream(name);
      expect(servers.map((s) => s.service)).toEqual(services);
      for (const { service, port } of servers) expect(compose.services[service]!.environment!.PORT).toBe(port);
    }
  });

  it("upgrades WebSockets on the realtime path with timeouts above ping interval + timeout", () => {
    const realtimeConfig = loadConfig(REALTIME_SECTIONS, compose.services["realtime-a"]!.environment!);
    const realtimePath = realtimeConfig.REALTIME_PATH;
    const ws = location(`${realtimePath}/`);
    expect(ws).toContain("proxy_pass http://realtime;");
    expect(ws).toContain("proxy_set_header Upgrade $http_upgrade;");
    expect(ws).toContain("proxy_set_header Connection $connection_upgrade;");
    const { REALTIME_PING_INTERVAL_MS, REALTIME_PING_TIMEOUT_MS } = realtimeConfig;
    const readTimeout = Number(/proxy_read_timeout (\d+)s;/.exec(ws)?.[1]);
    expect(readTimeout * 1000).toBeGreaterThan(REALTIME_PING_INTERVAL_MS + REALTIME_PING_TIMEOUT_MS);
  });

  it("bounds each client address in front of the services, no tighter than the services' own defaults", () => {
    const realtimeConfig = loadConfig(REALTIME_SECTIONS, compose.services["realtime-a"]!.environment!);
    const ws = location(`${realtimeConfig.REALTIME_PATH}/`);
    // Sockets: the nodes' allowance over all of them, so their TOO_MANY_CONNECTIONS comes first.
    expect(Number(/limit_conn sockets_per_address (\d+);/.exec(ws)?.[1])).toBe(realtimeConfig.REALTIME_MAX_SOCKETS_PER_ADDRESS_CLUSTER);
    expect(nginx).toContain("limit_conn_zone $binary_remote_addr zone=sockets_per_address");
    // Requests: a flood of cheap ones stops at nginx (bench/abuse.ts), below the rate the gateways'
    // default points budget lets the cheapest request reach; a request of a wallet page's price
    // (100 points and more) still meets the gateways' RATE_LIMITED, which prices the work, first.
    const gateway = loadConfig(["shared", "gateway"], {});
    const rate = Number(/zone=graphql_per_address:\w+ rate=(\d+)r\/s;/.exec(nginx)?.[1]);
    expect(rate).toBeLessThan(gateway.RATE_LIMIT_POINTS_PER_SECOND / REQUEST_POINTS);
    expect(rate * 100).toBeGreaterThan(gateway.RATE_LIMIT_POINTS_PER_SECOND);
    const burst = Number(/limit_req zone=graphql_per_address burst=(\d+) nodelay;/.exec(location("/graphql"))?.[1]);
    expect(burst * 100).toBeGreaterThanOrEqual(gateway.RATE_LIMIT_POINTS);
    // nginx's own refusals speak the services' shapes: RATE_LIMITED for GraphQL, TOO_MANY_CONNECTIONS for a handshake.
    expect(location("/graphql")).toContain("error_page 429 = @graphql_rate_limited;");
    expect(ws).toContain("error_page 429 = @sockets_limited;");
    const socketRefusal = /location @sockets_limited \{[^']*return 429 '([^']*)';/.exec(nginx)?.[1];
    expect(JSON.parse(socketRefusal ?? "null")).toMatchObject({ code: "TOO_MANY_CONNECTIONS", retryAfterSeconds: 30 });
    expect(location("/graphql")).toContain("proxy_pass http://gateways;");
    // A write deadline for clients that stop reading.
    expect(/^\s*send_timeout (\d+)s;/m.exec(nginx)?.[1]).toBeDefined();
  });

  it("passes the client address the gateways trust, and keeps /metrics internal", () => {
    expect(nginx).toContain("proxy_set_header X-Forwarded-For $remote_addr;");
    // A location with a proxy_set_header of its own inherits none: each proxying one sets the address.
    for (const block of nginx.split(/\n\s*location /).slice(1)) {
      if (block.includes("proxy_pass") && block.includes("proxy_set_header")) expect(block).toContain("proxy_set_header X-Forwarded-For $remote_addr;");
    }
    for (const name of ["gateway-a", "gateway-b", "realtime-a", "realtime-b"]) {
      expect(loadConfig(["shared", "gateway"], compose.services[name]!.environment!).TRUST_PROXY_HOPS).toBe(1);
    }
    expect(location("= /metrics")).toContain("return 404;");
    expect(location("/")).toContain("proxy_pass http://gateways;");
  });
});

describe("docker-compose.yml's replica profile (read replicas)", () => {
  // What the header tells an operator to put in .env to turn the replica on.
  const readUrl = /DATABASE_READ_URLS=(\S+)/.exec(readFileSync("docker-compose.yml", "utf8"))?.[1] ?? "";
  const withReplica = loadCompose("docker-compose.yml", { DATABASE_READ_URLS: readUrl.replace("<reader-password>", "reader") });
  const replica = withReplica.services["postgres-replica"]!;
  const subgraphNames = SUBGRAPHS.map((subgraph) => subgraph.name);

  it("runs postgres-replica under the replica profile: the primary's image, copied by pg_basebackup as the replication role of the init script", () => {
    expect(replica.profiles).toEqual(["replica"]);
    expect(replica.image).toBe(withReplica.services.postgres!.image);
    expect(replica.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    const script = replica.entrypoint?.[1] ?? "";
    const mounted = replica.volumes?.find((volume) => volume.endsWith(`:${script}:ro`))?.split(":")[0] ?? "";
    expect(existsSync(mounted), `${script} is not mounted from the repository`).toBe(true);
    expect(readFileSync(mounted, "utf8")).toMatch(/pg_basebackup .*-R/);
    const init = readFileSync("deploy/postgres/init-replication.sh", "utf8");
    expect(init).toContain(`DB_REPLICATION_USER:-${replica.environment!.REPLICATION_USER}`);
    expect(withReplica.services.postgres!.volumes).toContain("./deploy/postgres/init-replication.sh:/docker-entrypoint-initdb.d/20-replication.sh:ro");
    expect(replica.environment!.REPLICATION_PASSWORD).toBe(withReplica.services.postgres!.environment!.DB_REPLICATION_PASSWORD);
  });

  it("points only the subgraphs' reads at the replica, as the reader role; writers and the gateway stay on postgres", () => {
    for (const [name, service] of Object.entries(withReplica.services)) {
      const urls = service.environment?.DATABASE_READ_URLS;
      if (!subgraphNames.includes(name)) {
        expect(urls, name).toBeUndefined();
        continue;
      }
      const config = loadConfig(["shared"], service.environment!);
      expect(config.DATABASE_READ_URLS.map((url) => new URL(url)).map((url) => [url.username, url.host, url.pathname])).toEqual([
        ["bets_reader", "postgres-replica:5432", "/bets"],
      ]);
      expect(new URL(config.DATABASE_URL!).host).toBe("postgres:5432");
    }
    // Without the profile the variable is empty: every read on postgres.
    for (const name of subgraphNames) expect(loadConfig(["shared"], compose.services[name]!.environment!).DATABASE_READ_URLS).toEqual([]);
  });

  it("keeps both servers' connections under max_connections, the replica's no lower than the primary's", () => {
    const maxOf = (service: ComposeService) => Number(/max_connections=(\d+)/.exec(service.command!.join(" "))?.[1]);
    const primaryMax = maxOf(withReplica.services.postgres!);
    expect(maxOf(replica)).toBeGreaterThanOrEqual(primaryMax);
    expect(connectionBudget(withReplica)).toBeLessThanOrEqual(primaryMax - SUPERUSER_RESERVED_CONNECTIONS);
    // On the replica: each subgraph's pool and its check connection.
    const onReplica = subgraphNames.reduce((sum, name) => sum + Number(withReplica.services[name]!.environment!.DATABASE_POOL_SIZE) + 1, 0);
    expect(onReplica).toBeLessThanOrEqual(maxOf(replica) - SUPERUSER_RESERVED_CONNECTIONS);
  });
});
