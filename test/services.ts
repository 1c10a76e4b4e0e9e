/**
 * Tests that need a service Node does not bring (Redis, nginx, Chromium): on a machine without it
 * they are skipped, and their title says SKIPPED, why, and the command that installs it; under CI
 * (CI=true, set by .ci/run, which installs every one) nothing skips — a missing service fails.
 * PostgreSQL is not among them: test/postgres-global-setup.ts starts an embedded one.
 */
import { existsSync } from "node:fs";
import { createConnection } from "node:net";
import { delimiter, join } from "node:path";
import { describe } from "vitest";
import { testConfig } from "./config.ts";

export interface Service {
  /** Why it is unavailable, or undefined when it is there. */
  missing: string | undefined;
  install: string;
}

const inCi = () => process.env.CI === "true";

/** A TCP connection to `url`'s host and port within `timeoutMs`, answered by a Redis PONG. */
async function redisAnswers(url: string, timeoutMs = 1_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname.replace(/^\[|\]$/g, ""), port: Number(port || 6379) });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (chunk: Buffer) => done(chunk.toString().startsWith("+PONG") || chunk.toString().startsWith("-NOAUTH")));
    socket.once("error", () => done(false));
  });
}

/** The Redis server of the tests (TEST_REDIS_URL). */
export async function redisService(url: string = testConfig.TEST_REDIS_URL): Promise<Service> {
  const there = await redisAnswers(url);
  return { missing: there ? undefined : `no Redis at ${new URL(url).host}`, install: "apt-get install -y redis-server" };
}

/** An executable the tests run (nginx, Chromium). */
export function binaryService(path: string, install: string): Service {
  return { missing: existsSync(path) ? undefined : `${path} is absent`, install };
}

/** A command found on PATH (e.g. redis-server for a private server). */
export function commandService(command: string, install: string): Service {
  const found = (process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, command)));
  return { missing: found ? undefined : `${command} is not on PATH`, install };
}

/** redis-server on PATH, for suites that start a private one of their own (test/private-redis.ts). */
export const privateRedisServer: Service = commandService("redis-server", "apt-get install -y redis-server");

/** The title a suite shows: itself, or itself with SKIPPED, the reason and the install command. */
export function serviceTitle(title: string, ...services: Service[]): string {
  const missing = services.filter((s) => s.missing);
  if (missing.length === 0 || inCi()) return title;
  return `${title} — SKIPPED: ${missing.map((s) => `${s.missing} (${s.install})`).join("; ")}`;
}

/** True when the suite must be skipped: a service is missing and this is not CI. */
export function skipWithout(...services: Service[]): boolean {
  return !inCi() && services.some((s) => s.missing !== undefined);
}

/** describe() that needs `services`: skipped with a SKIPPED title without them, except under CI. */
export function describeWith(services: Service | Service[], title: string, fn: () => void): void {
  const list = Array.isArray(services) ? services : [services];
  describe.skipIf(skipWithout(...list))(serviceTitle(title, ...list), fn);
}
