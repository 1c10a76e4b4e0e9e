// `npm run db:seed` (scripts/seed.ts) without a terminal: plain progress lines, no \r, then the summary.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { spawnTypeScript } from "../test/spawn.ts";

const dir = mkdtempSync(join(tmpdir(), "seed-progress-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("prints plain progress lines every 10 % when stdout is not a terminal", async () => {
  const child = spawnTypeScript("scripts/seed.ts", {
    args: ["--bets", "40", "--proven-limit", "0"],
    env: { DATABASE_URL: "", DATA_DIR: join(dir, "data"), LOG_LEVEL: "info" },
  });
  const { code } = await child.closed;
  expect(code, child.stderr()).toBe(0);
  const progress = child.lines.filter((l) => /^bets: \d+\/40 \(\d+%\)$/.test(l));
  expect(progress.map((l) => Number(/\((\d+)%\)/.exec(l)![1]))).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
  expect(child.lines.some((l) => l.includes("\r"))).toBe(false);
  expect(child.json.find((l) => l.msg === "fixtures seeded")).toMatchObject({ counts: expect.any(Object) });
}, 120_000);
