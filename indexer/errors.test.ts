import { HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError } from "viem";
import { describe, expect, it } from "vitest";
import { backoffDelay, ChainIdMismatchError, isRetryable, ReorgTooDeepError, RpcUnavailableError, toIndexerError, withRetry } from "./errors.ts";

const http = (status?: number) => new HttpRequestError({ url: "http://127.0.0.1:8545", status, body: { method: "eth_getLogs" } });
const rpc = (code: number) => new RpcRequestError({ url: "http://127.0.0.1:8545", body: { method: "eth_getLogs" }, error: { code, message: "boom" } });

describe("toIndexerError", () => {
  it.each([
    ["HTTP 503", http(503), "RPC_UNAVAILABLE", true],
    ["HTTP 429", http(429), "RPC_UNAVAILABLE", true],
    ["network failure (no status)", http(), "RPC_UNAVAILABLE", true],
    ["HTTP 401", http(401), "RPC_REJECTED", false],
    ["timeout", new TimeoutError({ body: {}, url: "http://127.0.0.1:8545" }), "RPC_UNAVAILABLE", true],
    ["JSON-RPC limit exceeded", rpc(-32005), "RPC_UNAVAILABLE", true],
    ["JSON-RPC internal error", rpc(-32603), "RPC_UNAVAILABLE", true],
    ["JSON-RPC method not found", rpc(-32601), "RPC_REJECTED", false],
    ["response over the size limit", new ResponseBodyTooLargeError({ maxSize: 1, size: 2 }), "RPC_RESPONSE_TOO_LARGE", false],
    ["serialization failure", Object.assign(new Error("could not serialize"), { code: "40001" }), "DATABASE_UNAVAILABLE", true],
    ["Prisma write conflict", Object.assign(new Error("conflict"), { code: "P2034" }), "DATABASE_UNAVAILABLE", true],
    ["connection refused", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }), "DATABASE_UNAVAILABLE", true],
    ["anything else", new TypeError("x is undefined"), "UNEXPECTED", false],
  ])("%s → %s", (_name, error, code, retryable) => {
    const classified = toIndexerError(error, 1);
    expect(classified.code).toBe(code);
    expect(classified.retryable).toBe(retryable);
    expect(classified.cause).toBe(error);
    expect(classified.chainId).toBe(1);
  });

  it("finds the cause down the chain and keeps IndexerErrors as they are", () => {
    expect(toIndexerError(new Error("wrapped", { cause: http(502) })).code).toBe("RPC_UNAVAILABLE");
    const deep = new ReorgTooDeepError("too deep", { details: "ancestor 5", chainId: 9 });
    expect(toIndexerError(deep)).toBe(deep);
    expect(deep.message).toBe("too deep\nDetails: ancestor 5");
    expect(isRetryable(deep)).toBe(false);
    expect(isRetryable(new RpcUnavailableError("x"))).toBe(true);
  });
});

describe("withRetry", () => {
  it("retries retryable failures with backoff, then succeeds", async () => {
    let calls = 0;
    const retries: number[] = [];
    const value = await withRetry(
      async () => {
        if (++calls < 3) throw http(503);
        return "ok";
      },
      { baseDelayMs: 1, onRetry: (_e, attempt) => retries.push(attempt) },
    );
    expect(value).toBe("ok");
    expect(retries).toEqual([1, 2]);
  });

  it("gives up after the attempts, and at once on a non-retryable failure", async () => {
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw http(503);
        },
        { attempts: 3, baseDelayMs: 1 },
      ),
    ).rejects.toMatchObject({ code: "RPC_UNAVAILABLE" });
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw new ChainIdMismatchError("wrong chain");
        },
        { baseDelayMs: 1 },
      ),
    ).rejects.toBeInstanceOf(ChainIdMismatchError);
    expect(calls).toBe(1);
  });

  it("stops retrying once the signal aborts", async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        controller.abort();
        throw http(503);
      },
      { baseDelayMs: 10_000, signal: controller.signal },
    );
    await expect(run).rejects.toMatchObject({ code: "RPC_UNAVAILABLE" });
    expect(calls).toBe(1);
  });
});

it("backoffDelay grows exponentially with jitter and is capped", () => {
  expect(backoffDelay(1, { baseDelayMs: 100 }, () => 0)).toBe(50);
  expect(backoffDelay(1, { baseDelayMs: 100 }, () => 1)).toBe(100);
  expect(backoffDelay(4, { baseDelayMs: 100 }, () => 1)).toBe(800);
  expect(backoffDelay(30, { baseDelayMs: 100, maxDelayMs: 5_000 }, () => 1)).toBe(5_000);
});
