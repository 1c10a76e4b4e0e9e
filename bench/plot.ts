// A horizontal bar chart as a standalone SVG string (no dependency): one group of bars per query,
// each bar labelled with its value. The benchmarks write it next to their tables (bench/gateways.ts).

export interface BarGroup {
  title: string;
  bars: { label: string; value: number; highlight?: boolean }[];
}

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function barPlot(title: string, groups: BarGroup[]): string {
  const labelWidth = 380;
  const barWidth = 420;
  const row = 22;
  const width = labelWidth + barWidth + 90;
  const parts: string[] = [];
  let y = 40;
  parts.push(`<text x="10" y="22" font-size="14" font-weight="bold">${escapeXml(title)}</text>`);
  for (const group of groups) {
    const max = Math.max(1, ...group.bars.map((b) => (Number.isFinite(b.value) ? b.value : 0)));
    y += 14;
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold">${escapeXml(group.title)}</text>`);
    y += 8;
    for (const bar of group.bars) {
      const value = Number.isFinite(bar.value) ? bar.value : 0;
      const w = Math.max(1, Math.round((value / max) * barWidth));
      const fill = bar.highlight ? "#888888" : "#3b6ea8";
      parts.push(`<text x="${labelWidth - 6}" y="${y + 15}" font-size="12" text-anchor="end">${escapeXml(bar.label)}</text>`);
      parts.push(`<rect x="${labelWidth}" y="${y + 3}" width="${w}" height="${row - 6}" fill="${fill}"/>`);
      parts.push(`<text x="${labelWidth + w + 6}" y="${y + 15}" font-size="12">${value.toFixed(1)}</text>`);
      y += row;
    }
    y += 10;
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="${width}" height="${y + 10}" font-family="sans-serif">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    ...parts,
    "</svg>",
    "",
  ].join("\n");
}
