import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { clientAddress } from "./client-address.ts";

describe("clientAddress", () => {
  const request = (peer: string, forwarded?: string) =>
    ({ socket: { remoteAddress: peer }, headers: forwarded ? { "x-forwarded-for": forwarded } : {} }) as unknown as IncomingMessage;

  it("charges the peer when no proxy is trusted, whatever X-Forwarded-For claims", () => {
    expect(clientAddress(request("10.0.0.1", "1.2.3.4"), 0)).toBe("10.0.0.1");
  });
  it("takes the address the trusted proxy appended, not the client-written left end", () => {
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, 203.0.113.7"), 1)).toBe("203.0.113.7");
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, 203.0.113.7, 10.0.0.9"), 2)).toBe("203.0.113.7");
  });
  it("falls back to the peer when the request did not pass the trusted proxies", () => {
    expect(clientAddress(request("10.0.0.1"), 1)).toBe("10.0.0.1");
  });
});
