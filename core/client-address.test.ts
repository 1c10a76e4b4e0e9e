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
  it("charges an IPv6 client per /64 (one subscriber's network holds 2^64 addresses), however the address is written", () => {
    const key = clientAddress(request("2001:db8:1:2::1"), 0);
    expect(key).toBe("2001:db8:1:2::/64");
    for (const sibling of ["2001:db8:1:2:ffff:ffff:ffff:fffe", "2001:0DB8:0001:0002:0:0:0:9", "2001:db8:1:2::1.2.3.4", "2001:db8:1:2::5%eth0"]) {
      expect(clientAddress(request(sibling), 0)).toBe(key);
    }
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, 2001:db8:1:2:abcd::7"), 1)).toBe(key);
    expect(clientAddress(request("2001:db8:1:3::1"), 0)).toBe("2001:db8:1:3::/64");
    expect(clientAddress(request("::1"), 0)).toBe("0:0:0:0::/64");
    expect(clientAddress(request("::"), 0)).toBe("0:0:0:0::/64");
  });
  it("charges an IPv4 client seen through a dual-stack socket as that IPv4 address; leaves what is not an address as written", () => {
    expect(clientAddress(request("::ffff:127.0.0.3"), 0)).toBe("127.0.0.3");
    expect(clientAddress(request("::FFFF:203.0.113.7"), 0)).toBe("203.0.113.7");
    expect(clientAddress(request("10.0.0.1", "not-an-address"), 1)).toBe("not-an-address");
  });
  it("charges an IPv4-mapped address as its IPv4 address however it is spelled, not all such clients as one ::/64", () => {
    for (const spelling of ["0:0:0:0:0:ffff:203.0.113.7", "0::ffff:203.0.113.7", "::ffff:cb00:7107", "0:0:0:0:0:FFFF:CB00:7107", "::ffff:203.0.113.7%eth0"]) {
      expect(clientAddress(request(spelling), 0)).toBe("203.0.113.7");
    }
    expect(clientAddress(request("::ffff:0:203.0.113.7"), 0)).toBe("0:0:0:0::/64");
  });
  it("reads past a port or brackets a trusted proxy appended (Azure Application Gateway writes ip:port), so a new connection is not a new client", () => {
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, 203.0.113.7:50123"), 1)).toBe("203.0.113.7");
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, [2001:db8:1:2::9]:50123"), 1)).toBe("2001:db8:1:2::/64");
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, [2001:db8:1:2::9]"), 1)).toBe("2001:db8:1:2::/64");
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, [not-an-address]:1"), 1)).toBe("[not-an-address]:1");
  });
});
