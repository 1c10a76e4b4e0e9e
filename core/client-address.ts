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

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const TRAILING_IPV4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function clientOf(address: string): string {
  if (!isIPv6(address)) return address;
  const mapped = IPV4_MAPPED.exec(address);
  if (mapped) return mapped[1]!;
  return `${hextets(address).slice(0, 4).join(":")}::/64`;
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
