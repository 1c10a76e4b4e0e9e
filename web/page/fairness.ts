// The fairness panel: one figure per network and game from `fairnessStats` — the 16-bucket outcome
// histogram as an inline SVG (bars and a line at the uniform expectation settled/16), and the
// observed return to player with a 95% confidence band beside the rule's expected one. SVG built
// with createElementNS and presentation attributes only: the CSP forbids inline styles.
import { type GameStats, rtpBand } from "./rtp.ts";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 320;
const HEIGHT = 120;
const BAR_GAP = 2;

function svgElement<K extends keyof SVGElementTagNameMap>(name: K, attributes: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}

/** The histogram: 16 `rect.bar` (bucket i's count in its `<title>`) and one `line.uniform` at settled/16. */
export function histogramSvg(stats: GameStats): SVGSVGElement {
  const counts = stats.outcomeHistogram.map(Number);
  const expected = Number(stats.settledBets) / counts.length;
  const top = Math.max(1, expected * 1.5, ...counts);
  const y = (value: number): number => HEIGHT - (value / top) * HEIGHT;
  const svg = svgElement("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, class: "histogram", role: "img" });
  const label = svgElement("title", {});
  label.textContent = `${stats.game}: outcomes of ${stats.settledBets} settled bets in 16 buckets; uniform expectation ${expected.toFixed(1)} each`;
  svg.append(label);
  const barWidth = WIDTH / counts.length;
  counts.forEach((count, i) => {
    const bar = svgElement("rect", { class: "bar", x: i * barWidth + BAR_GAP / 2, y: y(count), width: barWidth - BAR_GAP, height: HEIGHT - y(count) });
    const title = svgElement("title", {});
    title.textContent = `bucket ${i}: ${count}`;
    bar.append(title);
    svg.append(bar);
  });
  svg.append(svgElement("line", { class: "uniform", x1: 0, x2: WIDTH, y1: y(expected), y2: y(expected) }));
  return svg;
}

function line(text: string, className?: string): HTMLParagraphElement {
  const p = document.createElement("p");
  p.textContent = text;
  if (className) p.className = className;
  return p;
}

/** One figure per entry, replacing the previous ones; `networkName` labels the chain. */
export function renderFairness(target: HTMLElement, entries: readonly GameStats[], networkName: (chainId: number) => string): void {
  const figures = entries.map((stats) => {
    const figure = document.createElement("figure");
    figure.className = "game-stats";
    Object.assign(figure.dataset, { chainId: String(stats.chainId), game: stats.game, settled: String(stats.settledBets) });
    const caption = document.createElement("figcaption");
    caption.textContent = `${stats.game} · ${networkName(stats.chainId)}`;
    const band = rtpBand(stats);
    const rtp = line(
      band
        ? `RTP observed ${stats.observedRtp.toFixed(4)} (95% ${band.low.toFixed(4)}–${band.high.toFixed(4)}) · expected ${stats.expectedRtp.toFixed(4)}`
        : `RTP observed ${stats.observedRtp.toFixed(4)} · expected ${stats.expectedRtp.toFixed(4)}`,
      "rtp",
    );
    if (band) rtp.dataset.withinBand = String(stats.expectedRtp >= band.low && stats.expectedRtp <= band.high);
    figure.append(
      caption,
      histogramSvg(stats),
      rtp,
      line(
        `${stats.settledBets} settled (${stats.finalizedSettledBets} final) · χ² ${stats.chiSquare.toFixed(2)} (15 df) · p ${stats.pValue.toFixed(3)}`,
        "muted",
      ),
    );
    return figure;
  });
  target.replaceChildren(...figures);
}
