import { readFileSync } from "node:fs";
import { parse } from "yaml";

// docker-compose.yml as Compose reads it: YAML merge keys resolved and `${VAR:-default}`
// interpolated (from `env`, else the default), so tests see the values a container gets.

export interface ComposeHealthcheck {
  test: string[];
  interval?: string;
  timeout?: string;
  retries?: number;
  start_period?: string;
}

export interface ComposeService {
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  image?: string;
  build?: string;
  volumes?: string[];
  healthcheck?: ComposeHealthcheck;
  profiles?: string[];
  deploy?: { replicas?: number };
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
}

/**
 * `${NAME}`, `${NAME:-default}`, `${NAME-default}` and `${NAME:?error}` (an error when unset or
 * empty) as Compose interpolates them; `$$` is a literal `$`.
 */
export function interpolate(text: string, env: Record<string, string | undefined> = {}): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-|:\?)([^}]*))?\}/g,
    (match, name: string | undefined, operator: string | undefined, fallback: string | undefined) => {
      if (match === "$$") return "$";
      const value = env[name!];
      if (operator === ":-") return value ? value : (fallback ?? "");
      if (operator === "-") return value ?? fallback ?? "";
      if (operator === ":?") {
        if (!value) throw new Error(`required variable ${name} is missing a value: ${fallback ?? ""}`);
        return value;
      }
      return value ?? "";
    },
  );
}

/** What an operator's .env must set (Compose refuses to start without them): test values. */
export const COMPOSE_REQUIRED_ENV: Readonly<Record<string, string>> = { CURSOR_SECRET: "compose-test-cursor-secret" };

export function loadCompose(path = "docker-compose.yml", env: Record<string, string | undefined> = {}): ComposeFile {
  return parse(interpolate(readFileSync(path, "utf8"), { ...COMPOSE_REQUIRED_ENV, ...env }), { merge: true }) as ComposeFile;
}

/** PostgreSQL's default `superuser_reserved_connections`. */
export const SUPERUSER_RESERVED_CONNECTIONS = 3;

/**
 * The most PostgreSQL connections one process of a service opens: its pool, one per LISTEN
 * (realtime nodes and publishers follow the outbox's NOTIFY), one for the publisher's lock, one
 * for the migration's own client, a gateway's CSV export pool, and one for the read replicas' head check (DATABASE_READ_URLS set,
 * core/read-replicas.ts) — on the primary; the pools of reads open on the replicas.
 */
export function connectionsPerProcess(service: ComposeService): number {
  if (!service.environment?.DATABASE_URL) return 0;
  const script = service.command?.[2];
  if (script === "bin/migrate.ts") return 1;
  const pool = Number(service.environment.DATABASE_POOL_SIZE ?? 10);
  const publisher = script === "bin/publisher.ts" || (script === "bin/realtime.ts" && ["1", "true"].includes(service.environment.REALTIME_PUBLISHER ?? ""));
  const listen = script === "bin/realtime.ts" || script === "bin/publisher.ts" ? 1 : 0;
  const headCheck = service.environment.DATABASE_READ_URLS ? 1 : 0;
  // A gateway's CSV exports read on a pool of their own (bin/wiring.ts openCsvExportReads).
  const csvExports = script === "bin/gateway.ts" ? Number(service.environment.CSV_EXPORT_POOL_SIZE ?? 2) : 0;
  return pool + listen + (publisher ? 1 : 0) + headCheck + csvExports;
}

/** The whole topology's connections at most: every replica of every service (profiles included). */
export function connectionBudget(compose: ComposeFile): number {
  return Object.values(compose.services).reduce((sum, service) => sum + (service.deploy?.replicas ?? 1) * connectionsPerProcess(service), 0);
}
