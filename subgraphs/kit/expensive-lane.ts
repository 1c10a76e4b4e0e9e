import { GraphQLError } from "graphql";
import { BoundedLane, type LaneOptions, type LaneStats } from "../../core/bounded-lane.ts";
import { ErrorCode } from "../../core/errors.ts";

// The subgraphs' expensive lane: statements that may read much of the table — counts and pages no
// index serves (subgraphs/history/data.ts says which) — run in a bounded lane (core/bounded-lane.ts,
// which owns the rules: concurrency, the per-client cap, the queue and its deadline). The client is
// the address the gateway forwards (CLIENT_ADDRESS_HEADER); a refusal is SERVICE_BUSY with a retry hint.

export { MAX_WAITING, MAX_WAITING_PER_CLIENT } from "../../core/bounded-lane.ts";
export type ExpensiveLaneOptions = LaneOptions;
export type ExpensiveLaneStats = LaneStats;

/** An expensive statement refused: the lane stayed full for the queue's deadline, or the client's share of the queue is full. */
export class ServiceBusyError extends GraphQLError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { extensions: { code: ErrorCode.ServiceBusy, retryAfterSeconds } });
    this.name = "ServiceBusyError";
  }
}

export class ExpensiveLane extends BoundedLane {
  constructor(options: ExpensiveLaneOptions) {
    super(
      options,
      (reason, retryAfterSeconds) =>
        new ServiceBusyError(
          `The service is busy with expensive queries (${reason}): retry after ${retryAfterSeconds} s, or narrow the filter`,
          retryAfterSeconds,
        ),
    );
  }
}
