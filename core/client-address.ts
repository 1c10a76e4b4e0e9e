// The client a request or a socket handshake is charged to, one rule for every tier that limits
// per client (the gateway's rate limit and CSV exports, the realtime tier's admission and replays).
import type { IncomingMessage } from "node:http";

/**
 * The socket's peer, or with `trustProxyHops` proxies in front, the address they appended to
 * X-Forwarded-For (never the client-supplied left end).
 */
export function clientAddress(req: Pick<IncomingMessage, "socket" | "headers">, trustProxyHops: number): string {
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
