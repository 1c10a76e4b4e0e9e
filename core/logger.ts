import { pino, type DestinationStream, type Logger } from "pino";
import { currentRequestId } from "./request-scope.ts";

export type { Logger };

/**
 * Structured JSON logs. `serverSeed`-like keys are redacted defensively even though no service
 * ever holds a server seed: the simulator is the only process that does, and it never logs it.
 */
export function createLogger(options: { level?: string; name?: string; destination?: DestinationStream } = {}): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? "info",
      redact: {
        paths: ["serverSeed", "*.serverSeed", "seed", "*.seed", "CURSOR_SECRET", "*.CURSOR_SECRET", "CURSOR_SECRET_PREVIOUS", "*.CURSOR_SECRET_PREVIOUS"],
        censor: "[redacted]",
      },
      base: { service: options.name },
      // Every line written while serving a request names it (core/request-scope.ts).
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
    },
    options.destination,
  );
}

/** A logger that drops everything: tests and benchmarks that do not want output. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
