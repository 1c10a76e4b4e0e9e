/**
 * The compose topology in real containers (deploy/containers.test.ts): Debian's docker-compose
 * 1.29 over docker-compose.yml and deploy/compose.host.yml (host networking on loopback), the
 * images of deploy/images/build.sh, and what the host sees of them (which process listens where).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import type { Service } from "./services.ts";

const run = promisify(execFile);

/** The images deploy/images/build.sh builds (docker-compose.yml's names). */
export const IMAGES = [
  "bet-results-api:latest",
  "bet-results/postgres:15",
  "bet-results/redis:7",
  "bet-results/nginx:1.22",
  "bet-results/prometheus:2",
  "bet-results/anvil:1.7.1",
] as const;

/** Each service's loopback port in deploy/compose.host.yml (for the indexer and publishers: metrics and probes). */
export const HOST_PORTS = {
  "proxy-host": 18080,
  "gateway-a": 14000,
  "gateway-b": 14010,
  networks: 14001,
  results: 14002,
  history: 14003,
  "realtime-a": 14100,
  "realtime-b": 14110,
  indexer: 19464,
  publisher: 19465,
  "publisher-b": 19466,
  postgres: 15432,
  "postgres-replica": 15433,
  redis: 16379,
  "redis-cache": 16380,
  anvil: 18545,
  "prometheus-host": 19090,
} as const;
export type HostService = keyof typeof HOST_PORTS;

/** The machine's own PostgreSQL and Redis, which the topology must not use. */
export const MACHINE_PORTS = { postgres: 5432, redis: 6379 } as const;

const DOCKER_SOCKET = "/var/run/docker.sock";

/** A Docker daemon answering on its socket, and every image built. */
export async function dockerService(): Promise<Service> {
  const install = "apt-get install -y docker.io docker-compose debootstrap; dockerd &; deploy/images/build.sh (.ci/run does all three)";
  if (!existsSync(DOCKER_SOCKET)) return { missing: `no Docker daemon (${DOCKER_SOCKET} is absent)`, install };
  try {
    await run("docker", ["image", "inspect", ...IMAGES], { timeout: 20_000 });
  } catch (error) {
    const reason = error instanceof Error && /No such image/i.test(error.message) ? "the images are not built" : "the Docker daemon does not answer";
    return { missing: reason, install };
  }
  try {
    await run("docker-compose", ["version", "--short"], { timeout: 20_000 });
  } catch {
    return { missing: "docker-compose is not installed", install };
  }
  return { missing: undefined, install };
}

/** The services Prometheus scrapes under the host override (deploy/prometheus/host.sed), by job. */
export const SCRAPED: Record<string, HostService[]> = {
  gateway: ["gateway-a", "gateway-b"],
  subgraphs: ["networks", "results", "history"],
  realtime: ["realtime-a", "realtime-b"],
  indexer: ["indexer"],
  publisher: ["publisher", "publisher-b"],
};

/** One compose project over both files, with the optional profiles the test runs. */
export class ComposeProject {
  readonly name: string;
  readonly env: Record<string, string>;
  constructor(name: string, env: Record<string, string>) {
    this.name = name;
    this.env = env;
  }

  private args(rest: string[]): string[] {
    return [
      ...["-p", this.name, "-f", "docker-compose.yml", "-f", "deploy/compose.host.yml"],
      ...["--profile", "local-chain", "--profile", "replica", "--profile", "host-monitoring", ...rest],
    ];
  }

  async compose(rest: string[], timeoutMs = 600_000): Promise<string> {
    const { stdout } = await run("docker-compose", this.args(rest), {
      env: { ...process.env, ...this.env },
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  /** The container of a service (its first, as compose names it). */
  container(service: string): string {
    return `${this.name}_${service}_1`;
  }

  /** The project's running containers (the one-shot migrate has exited). */
  async runningContainerIds(): Promise<string[]> {
    return (await docker(["ps", "-q", "--filter", `label=com.docker.compose.project=${this.name}`])).split("\n").filter(Boolean);
  }
}

export async function docker(args: string[], timeoutMs = 60_000): Promise<string> {
  const { stdout } = await run("docker", args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

export interface ContainerState {
  /** healthy, unhealthy, starting, or its status when it has no healthcheck. */
  health: string;
  /** running, exited, restarting… */
  status: string;
  restarts: number;
  /** Host pid of the main process (0 when not running). */
  pid: number;
  /** The main process's exit code, once it has exited. */
  exitCode: number;
  startedAt: string;
}

export async function containerState(container: string): Promise<ContainerState> {
  const out = await docker([
    "inspect",
    "-f",
    "{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}} {{.State.Status}} {{.RestartCount}} {{.State.Pid}} {{.State.ExitCode}} {{.State.StartedAt}}",
    container,
  ]);
  const [health, status, restarts, pid, exitCode, startedAt] = out.trim().split(" ");
  return { health: health!, status: status!, restarts: Number(restarts), pid: Number(pid), exitCode: Number(exitCode), startedAt: startedAt! };
}

/** A host process's argv, as the kernel holds it (/proc/<pid>/cmdline). */
export function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

/** Host pids of every process of a container. */
export async function containerPids(container: string): Promise<Set<number>> {
  const out = await docker(["top", container, "-eo", "pid"]);
  return new Set(
    out
      .split("\n")
      .slice(1)
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0),
  );
}

/** TCP sockets on the host (ss): local address, peer address and the owning pids. */
export interface HostSocket {
  local: string;
  peer: string;
  pids: number[];
}

export async function hostSockets(state: "listening" | "established"): Promise<HostSocket[]> {
  const { stdout } = await run("ss", ["-Htnp", "state", state], { maxBuffer: 64 * 1024 * 1024 });
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const fields = line.trim().split(/\s+/);
      // listening/established: Recv-Q Send-Q Local Peer [Process]
      const pids = [...line.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1]));
      return { local: fields[2]!, peer: fields[3]!, pids };
    });
}

export const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(":") + 1));
