// The Kubernetes example (deploy/kubernetes/) as an operator would copy it: every long-running
// process of docker-compose.yml has a Deployment whose container probes /livez and /readyz on the
// port it listens on (PORT, or METRICS_PORT for the publisher and the indexer), with the compose
// file's command. The probes themselves are tested on the real processes (bin/probes.test.ts).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { loadCompose } from "../test/compose.ts";

interface Probe {
  httpGet: { path: string; port: number };
}
interface Container {
  name: string;
  command: string[];
  env?: { name: string; value: string }[];
  ports: { containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: Container[] } } };
}

const DIR = "deploy/kubernetes";
const deployments = readdirSync(DIR)
  .filter((file) => file.endsWith(".yaml"))
  .flatMap((file) => parseAllDocuments(readFileSync(join(DIR, file), "utf8")).map((doc) => doc.toJSON() as Manifest))
  .filter((manifest) => manifest.kind === "Deployment");
const containers = deployments.flatMap((deployment) =>
  deployment.spec.template.spec.containers.map((container) => [deployment.metadata.name, container] as const),
);

describe("deploy/kubernetes/", () => {
  it("runs every long-running process of docker-compose.yml", () => {
    const compose = loadCompose();
    const commands = (list: string[][]) => [...new Set(list.map((command) => command.join(" ")))].sort();
    const longRunning = Object.values(compose.services)
      .map((service) => service.command ?? [])
      .filter((command) => /^bin\/(gateway|subgraph|realtime|publisher|indexer)\.ts$/.test(command[2] ?? ""));
    expect(commands(containers.map(([, container]) => container.command))).toEqual(commands(longRunning));
  });

  it.each(containers)("%s probes /livez and /readyz on the port it listens on", (_name, container) => {
    const env = Object.fromEntries((container.env ?? []).map((entry) => [entry.name, entry.value]));
    const port = Number(env.METRICS_PORT ?? env.PORT);
    expect(container.ports.map((p) => p.containerPort)).toContain(port);
    expect(container.livenessProbe?.httpGet).toEqual({ path: "/livez", port });
    expect(container.readinessProbe?.httpGet).toEqual({ path: "/readyz", port });
    if (container.startupProbe) expect(container.startupProbe.httpGet).toEqual({ path: "/livez", port });
  });
});
