import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "./eventually.ts";
import { spawnChild } from "./spawn.ts";

// A failing `npm start` test must not leave its process tree behind: npm may exit while its children
// still run, and `npm start` keeps each local chain in a process group of its own (Ctrl-C must not
// reach it first). stop() ends every process of the child's group and of the groups it announced.

/** True while any process of the group `pgid` exists (signal 0 probes without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const leftovers: number[] = [];
afterEach(() => {
  for (const pgid of leftovers.splice(0)) if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
});

/** A Node script that starts a long-lived grandchild (in the child's group, or detached in its own) and prints its pid. */
function parentOf(grandchild: "same group" | "own group", parentExits: boolean): string {
  return `
    const childProcess = require("node:child_process");
    const sleeper = childProcess.fork("-e", [], { execArgv: ["-e", "setInterval(() => {}, 1000)"], stdio: "ignore", detached: ${grandchild === "own group"} });
    sleeper.unref();
    console.log(JSON.stringify({ msg: "started", grandchildPid: sleeper.pid }));
    ${parentExits ? "process.exit(0);" : "setInterval(() => {}, 1000);"}
  `;
}

describe("spawnChild's stop() of a process group", () => {
  it("ends the group's other processes after its leader has exited", async () => {
    const child = spawnChild({ args: ["-e", parentOf("same group", true)], group: true, name: "leader" });
    leftovers.push(child.pid);
    const { grandchildPid } = await child.waitForJson<{ grandchildPid: number }>((line) => line.msg === "started");
    await child.exited;
    expect(groupAlive(child.pid)).toBe(true);
    await child.stop({ graceMs: 500 });
    expect(groupAlive(child.pid)).toBe(false);
    expect(groupAlive(grandchildPid)).toBe(false);
  });

  it("ends the groups the child announced (a local chain in a group of its own)", async () => {
    const child = spawnChild({ args: ["-e", parentOf("own group", false)], group: true, name: "leader", announcedGroups: "grandchildPid" });
    leftovers.push(child.pid);
    const { grandchildPid } = await child.waitForJson<{ grandchildPid: number }>((line) => line.msg === "started");
    leftovers.push(grandchildPid);
    // Its group exists once the detached grandchild has called setsid, a moment after its pid is known.
    await eventually(() => groupAlive(grandchildPid), 30_000, "the announced group");
    await child.stop({ graceMs: 500 });
    expect(groupAlive(child.pid)).toBe(false);
    expect(groupAlive(grandchildPid)).toBe(false);
  });
});
