// The fairness panel's arithmetic, against the contract's rules as chain/betvault.ts mirrors them
// (the page does not bundle that module). The SVG itself is checked in Chromium (live-page.test.ts).
import { describe, expect, it } from "vitest";
import { BPS, GAME_IDS, GAMES } from "../chain/betvault.ts";
import { expectedRtp } from "../subgraphs/results/fairness.ts";
import { rtpBand, WIN_PROBABILITY } from "./page/rtp.ts";

describe("fairness panel arithmetic", () => {
  it("knows every game of the contract, with its win probability winBelow/modulus", () => {
    expect(Object.keys(WIN_PROBABILITY).sort()).toEqual([...GAME_IDS].sort());
    for (const game of GAME_IDS) expect(WIN_PROBABILITY[game]).toBeCloseTo(Number(GAMES[game].winBelow) / Number(GAMES[game].modulus), 15);
  });

  it("uses s = m·√(p(1−p)), the payout/stake standard deviation of a two-outcome game, for observed ± 1.96·s/√n", () => {
    for (const game of GAME_IDS) {
      const { modulus, winBelow, multiplierBps } = GAMES[game];
      const p = Number(winBelow) / Number(modulus);
      const m = Number(multiplierBps) / Number(BPS);
      const band = rtpBand({ game, settledBets: "400", observedRtp: 1.1, expectedRtp: expectedRtp(game) });
      expect(band?.s).toBeCloseTo(m * Math.sqrt(p * (1 - p)), 12);
      const half = (1.96 * m * Math.sqrt(p * (1 - p))) / 20;
      expect(band?.low).toBeCloseTo(1.1 - half, 12);
      expect(band?.high).toBeCloseTo(1.1 + half, 12);
    }
    // coinflip: s = 0.99, n = 100 → ± 0.194
    const coinflip = rtpBand({ game: "coinflip", settledBets: "100", observedRtp: 0.9, expectedRtp: 0.99 });
    expect(coinflip?.low).toBeCloseTo(0.9 - 0.19404, 10);
    expect(coinflip?.high).toBeCloseTo(0.9 + 0.19404, 10);
  });

  it("has no band without a settled bet or for a game whose rule it does not know", () => {
    expect(rtpBand({ game: "coinflip", settledBets: "0", observedRtp: 0, expectedRtp: 0.99 })).toBeUndefined();
    expect(rtpBand({ game: "roulette", settledBets: "10", observedRtp: 1, expectedRtp: 0 })).toBeUndefined();
  });
});
