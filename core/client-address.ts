// The client a request or a socket handshake is charged to, one rule for every tier that limits
// per client (the gateway's rate limit and CSV exports, the realtime tier's admission and replays).
import type { IncomingMessage } from "node:http";
import { isIPv6 } from "node:net";

/**
 * The client charged for a request: the socket's peer, or with `trustProxyHops` proxies in front,
 * the address they appended to X-Forwarded-For (never the client-supplied left end). An IPv6
 * client is its /64 (`2001:db8:1:2::/64`): one subscriber is routed a whole /64, so counting each
 * address would hand one host 2^64 budgets. An IPv4 address seen through a dual-stack socket
 * (`::ffff:203.0.113.7`) is that IPv4 address.
 */
export function clientAddress(req: Pick<IncomingMessage, "socket" | "headers">, trustProxyHops: number): string {
  return clientOf(forwardedAddress(req, trustProxyHops));
}

function forwardedAddress(req: Pick<IncomingMessage, "socket" | "headers">, trustProxyHops: number): string {
  const peer = req.socket.remoteAddress ?? "unknown";
  if (trustProxyHops <= 0) return peer;
  const header = req.headers["x-forwarded-for"];
  const chain = (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  // Fewer entries than trusted hops: the request did not come through them; charge the peer.
  return chain[chain.length - trustProxyHops] ?? peer;
}

const TRAILING_IPV4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
// What a proxy may append beside the address (some write `ip:port`, `[ipv6]:port`): without it, each
// new connection's source port would be a new client.
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;

function clientOf(written: string): string {
  const address = IPV4_WITH_PORT.exec(written)?.[1] ?? bracketed(written);
  if (!isIPv6(address)) return address;
  const groups = hextets(address);
  // An IPv4-mapped address (::ffff:a.b.c.d however spelled) is that IPv4 client.
  if (groups.slice(0, 5).every((group) => group === "0") && groups[5] === "ffff") {
    const [high, low] = [Number.parseInt(groups[6]!, 16), Number.parseInt(groups[7]!, 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join(".");
  }
  return `${groups.slice(0, 4).join(":")}::/64`;
}

function bracketed(written: string): string {
  const inner = BRACKETED.exec(written)?.[1];
  return inner !== undefined && isIPv6(inner) ? inner : written;
}

/** The eight 16-bit groups of a valid IPv6 address, in lower-case hex without leading zeros. */
function hextets(address: string): string[] {
  let text = address.split("%")[0]!;
  const v4 = TRAILING_IPV4.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string | undefined) => (part ? part.split(":").map((group) => Number.parseInt(group, 16).toString(16)) : []);
  const [head, tail] = text.split("::");
  const left = groups(head);
  if (tail === undefined) return left;
  const right = groups(tail);
  return [...left, ...Array.from({ length: 8 - left.length - right.length }, () => "0"), ...right];
}
