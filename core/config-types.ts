import { z } from "zod";

// The sections and value types the variables of core/config-variables.ts are declared with.
export const CONFIG_SECTIONS = {
  shared: "Every process",
  gateway: "The gateway (`bin/gateway.ts`, `npm start`)",
  subgraphs:
    "Subgraph routing, read by the gateway: one variable per subgraph of `subgraphs/registry.ts` (a subgraph process, `bin/subgraph.ts`, reads only the shared section)",
  realtime: "A realtime node (`bin/realtime.ts`, or the API host serving Socket.IO)",
  publisher: "The outbox publisher (`bin/publisher.ts`, or a node running one)",
  indexer: "The indexer (`bin/indexer.ts`, `npm start`)",
  start: "`npm start` (`bin/start.ts`); `npm run db:seed` reads the shared section, its options are flags",
  tooling: "Schema and database tooling (`scripts/`, `prisma.config.ts`)",
  test: "The test suite (`npm test`)",
  bench: "Benchmarks (`bench/`)",
} as const;

export type ConfigSection = keyof typeof CONFIG_SECTIONS;

export interface Variable<TSection extends ConfigSection = ConfigSection, TType extends z.ZodType = z.ZodType> {
  section: TSection;
  type: TType;
  /** The value when unset, as written in the environment (and in .env.example); none: unset. */
  default: string | undefined;
  description: string;
}

export function variable<TSection extends ConfigSection, TType extends z.ZodType>(
  section: TSection,
  type: TType,
  defaultValue: string | undefined,
  description: string,
): Variable<TSection, TType> {
  return { section, type, default: defaultValue, description };
}

export const port = z.coerce.number().int().min(0).max(65535);
export const positiveInt = z.coerce.number().int().positive();
export const nonNegativeInt = z.coerce.number().int().min(0);
export const logLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);
export const optionalUrl = (protocol: RegExp, message: string) =>
  z
    .string()
    .url()
    .refine((url) => protocol.test(url), message)
    .optional();
export const postgresUrl = optionalUrl(/^postgres(ql)?:\/\//, "must be a postgres:// URL");
/** A slow consumer's bound: 0 (none) or at least 64 KiB, so that a burst of ordinary updates never trips it. */
export const bufferedBytes = nonNegativeInt.refine((v) => v === 0 || v >= 64 * 1024, "must be 0 (no bound) or at least 65536");
export const onOff = z.enum(["on", "off"]).transform((v) => v === "on");
export const zeroOne = z.enum(["0", "1"]).transform((v) => v === "1");
export const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name");
export const flag = z.enum(["0", "1", "false", "true", ""]).transform((v) => v === "1" || v === "true");
