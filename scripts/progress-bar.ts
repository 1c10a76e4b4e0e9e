// Progress of a long script (npm run db:seed): on a terminal one bar redrawn in place with \r;
// elsewhere (CI, a pipe, a log file) a plain line at every 10 %, so logs stay readable.

export interface ProgressStep {
  label: string;
  done: number;
  total: number;
}

const percentOf = (done: number, total: number) => (total <= 0 ? 100 : Math.min(100, Math.floor((done / total) * 100)));

/** "bets [##--------]  25% 50/200" (pure). */
export function renderProgressBar({ label, done, total, width }: ProgressStep & { width: number }): string {
  if (!Number.isInteger(width) || width < 1) throw new RangeError(`width must be a positive integer, got ${width}`);
  if (done < 0 || total < 0) throw new RangeError(`done and total must not be negative, got done ${done}, total ${total}`);
  const filled = total <= 0 ? width : Math.min(width, Math.floor((done / total) * width));
  return `${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(percentOf(done, total)).padStart(3)}% ${done}/${total}`;
}

export interface ProgressDisplay {
  update(step: ProgressStep): void;
  /** Ends the bar's line (terminal); nothing otherwise. */
  end(): void;
}

export function createProgressDisplay(options: { tty: boolean; write: (text: string) => void; width?: number }): ProgressDisplay {
  const width = options.width ?? 30;
  let label: string | undefined;
  let lastDecile = -1;
  let drawn = "";
  return {
    update(step) {
      if (step.label !== label) {
        if (options.tty && drawn) options.write("\n");
        label = step.label;
        lastDecile = -1;
        drawn = "";
      }
      if (options.tty) {
        const line = renderProgressBar({ ...step, width });
        if (line === drawn) return;
        drawn = line;
        options.write(`\r${line}`);
        return;
      }
      const percent = percentOf(step.done, step.total);
      const decile = Math.floor(percent / 10);
      if (decile <= lastDecile) return;
      lastDecile = decile;
      options.write(`${step.label}: ${step.done}/${step.total} (${percent}%)\n`);
    },
    end() {
      if (options.tty && drawn) options.write("\n");
      drawn = "";
    },
  };
}
