import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../test/eventually.ts";
import { createNodeHttpServer } from "./node-http.ts";

// The realtime node's HTTP server has the write deadline (it had none): a client that stops
// reading a large answer is cut off, and counted.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("a realtime node's HTTP server", () => {
  it("cuts a client that stops reading within the write deadline, and counts it", async () => {
    let cuts = 0;
    const node = createNodeHttpServer({ writeDeadlineMs: 200, onSlowReaderCut: () => cuts++ });
    // An answer far larger than the socket buffers: most of it waits for the client.
    node.route("/large", (_req, res) => void res.end(Buffer.alloc(64 * 1024 * 1024, 120)));
    await new Promise<void>((resolve) => node.server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => node.server.close(() => resolve())));
    const port = (node.server.address() as net.AddressInfo).port;
    const client = net.connect(port, "127.0.0.1");
    client.on("error", () => undefined);
    closers.push(async () => void client.destroy());
    // Reads the first bytes, then stops reading: the kernel buffers fill, then the server's.
    client.once("data", () => client.pause());
    client.write("GET /large HTTP/1.1\r\nHost: x\r\n\r\n");
    await eventually(() => cuts > 0, 20_000, "the node to cut the client that stopped reading");
    expect(cuts).toBe(1);
  });

  it("answers headers past Node's bound in the API's error shape, as the gateway does", async () => {
    const node = createNodeHttpServer({ writeDeadlineMs: 10_000, onSlowReaderCut: () => undefined });
    await new Promise<void>((resolve) => node.server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => node.server.close(() => resolve())));
    const client = net.connect((node.server.address() as net.AddressInfo).port, "127.0.0.1");
    closers.push(async () => void client.destroy());
    const chunks: Buffer[] = [];
    client.on("data", (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
    client.write(`GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nHost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`);
    await closed;
    const answer = Buffer.concat(chunks).toString("utf8");
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(answer).toContain('"code":"REQUEST_HEADERS_TOO_LARGE"');
  });
});
