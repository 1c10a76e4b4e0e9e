// deploy/prometheus/prometheus.yml serves both topologies: docker-compose.yml's network as written,
// and deploy/compose.host.yml's loopback once deploy/prometheus/host.sed has rewritten it (as the
// override's prometheus-host does at start). Without Docker: the rewrite leaves no compose name
// behind and scrapes exactly the services' loopback ports (deploy/containers.test.ts checks them up).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { HOST_PORTS, SCRAPED } from "../test/containers.ts";

const run = promisify(execFile);

interface ScrapeConfig {
  job_name: string;
  static_configs?: { targets: string[] }[];
  dns_sd_configs?: unknown[];
}

describe("Prometheus under the host override", () => {
  it("scrapes every service on its loopback port, by job, and nothing else", async () => {
    const { stdout } = await run("sed", ["-f", "deploy/prometheus/host.sed", "deploy/prometheus/prometheus.yml"]);
    const { scrape_configs: jobs } = parse(stdout) as { scrape_configs: ScrapeConfig[] };
    expect(jobs.filter((job) => job.dns_sd_configs)).toEqual([]);
    const scraped = Object.fromEntries(jobs.map((job) => [job.job_name, (job.static_configs ?? []).flatMap((config) => config.targets).sort()]));
    const expected = Object.fromEntries(
      Object.entries(SCRAPED).map(([job, services]) => [job, services.map((service) => `127.0.0.1:${HOST_PORTS[service]}`).sort()]),
    );
    expect(scraped).toEqual(expected);
  });
});
