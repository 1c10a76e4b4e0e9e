// The db:seed progress display: a bar redrawn in place on a terminal, plain lines every 10 % elsewhere.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createProgressDisplay, renderProgressBar } from "./progress-bar.ts";

describe("renderProgressBar", () => {
  it("draws done / total as a bar of fixed width with the percent and the counts", () => {
    expect(renderProgressBar({ label: "bets", done: 0, total: 200, width: 10 })).toBe("bets [----------]   0% 0/200");
    expect(renderProgressBar({ label: "bets", done: 50, total: 200, width: 10 })).toBe("bets [##--------]  25% 50/200");
    expect(renderProgressBar({ label: "bets", done: 200, total: 200, width: 10 })).toBe("bets [##########] 100% 200/200");
  });

  it("an empty job is complete", () => {
    expect(renderProgressBar({ label: "rows", done: 0, total: 0, width: 4 })).toBe("rows [####] 100% 0/0");
  });

  it("keeps the bar inside its width for any counts", () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), fc.integer({ min: 1, max: 80 }), (done, total, width) => {
        const line = renderProgressBar({ label: "x", done, total, width });
        const bar = /\[([#-]*)\]/.exec(line)?.[1];
        expect(bar).toHaveLength(width);
        const percent = Number(/ +(\d+)% /.exec(line)?.[1]);
        expect(percent).toBeGreaterThanOrEqual(0);
        expect(percent).toBeLessThanOrEqual(100);
      }),
    );
  });

  it("refuses a negative count or width", () => {
    expect(() => renderProgressBar({ label: "x", done: -1, total: 1, width: 10 })).toThrow(/done/);
    expect(() => renderProgressBar({ label: "x", done: 1, total: 1, width: 0 })).toThrow(/width/);
  });
});

describe("createProgressDisplay", () => {
  it("on a terminal rewrites one line with \\r and ends it with a newline", () => {
    const out: string[] = [];
    const display = createProgressDisplay({ tty: true, write: (s) => out.push(s), width: 4 });
    for (let done = 0; done <= 4; done++) display.update({ label: "bets", done, total: 4 });
    display.end();
    expect(out.every((s, i) => i === out.length - 1 || s.startsWith("\r"))).toBe(true);
    expect(out.at(-2)).toBe("\rbets [####] 100% 4/4");
    expect(out.at(-1)).toBe("\n");
  });

  it("elsewhere prints plain lines at every 10 %, once each, whatever the step", () => {
    const out: string[] = [];
    const display = createProgressDisplay({ tty: false, write: (s) => out.push(s) });
    for (let done = 0; done <= 1000; done += 7) display.update({ label: "bets", done, total: 1000 });
    display.update({ label: "bets", done: 1000, total: 1000 });
    display.end();
    expect(out.every((s) => s.endsWith("\n") && !s.includes("\r"))).toBe(true);
    expect(out.map((s) => /(\d+)%/.exec(s)?.[1])).toEqual(["0", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100"]);
  });

  it("starts over when the label changes", () => {
    const out: string[] = [];
    const display = createProgressDisplay({ tty: false, write: (s) => out.push(s) });
    display.update({ label: "bets", done: 1, total: 1 });
    display.update({ label: "writing", done: 0, total: 2 });
    display.update({ label: "writing", done: 2, total: 2 });
    expect(out).toEqual(["bets: 1/1 (100%)\n", "writing: 0/2 (0%)\n", "writing: 2/2 (100%)\n"]);
  });
});
