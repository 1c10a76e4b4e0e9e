import net from "node:net";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { listen, type RunningHttpServer } from "./http.ts";

// Slow readers (issue 21): a client that stops reading an answer is cut off once no byte of it has
// left for the write deadline, its socket and buffered bytes freed, and the cut counted. Real
// sockets on loopback; the answer is larger than what the kernel buffers on both sides hold.

const ANSWER_BYTES = 48 * 1024 * 1024;
const big = Buffer.alloc(ANSWER_BYTES, 0x61);

let running: RunningHttpServer | undefined;
afterEach(async () => {
  await running?.close(0);
  running = undefined;
});

async function serveBigAnswer(writeDeadlineMs: number): Promise<{ running: RunningHttpServer; registry: Registry; finished: Promise<boolean> }> {
  const registry = new Registry();
  let served: (finished: boolean) => void = () => undefined;
  const finished = new Promise<boolean>((resolve) => (served = resolve));
  running = await listen(
    (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": ANSWER_BYTES });
      // Whether the whole answer left before the response closed.
      res.once("finish", () => served(true));
      res.once("close", () => served(res.writableFinished));
      res.end(big);
    },
    "127.0.0.1",
    0,
    { writeDeadlineMs, registry },
  );
  return { running, registry, finished };
}

const disconnects = async (registry: Registry) => {
  const metric = registry.getSingleMetric("http_slow_reader_disconnects_total");
  return metric ? ((await metric.get()).values[0]?.value ?? 0) : undefined;
};

/** Connects, asks for the answer, reads its first bytes and then stops reading. */
async function stalledReader(port: number): Promise<{ socket: net.Socket; received: () => number; closed: Promise<void> }> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  let received = 0;
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => undefined);
  const firstBytes = new Promise<void>((resolve) => socket.once("data", () => resolve()));
  let paused = false;
  socket.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (paused) return;
    paused = true;
    socket.pause(); // stops reading: the kernel buffers fill, then the server's
  });
  socket.write("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  await firstBytes;
  return { socket, received: () => received, closed };
}

describe("the write deadline", () => {
  it("cuts off a client that stops reading a large answer, and counts it", async () => {
    const { running, registry } = await serveBigAnswer(300);
    expect(await disconnects(registry)).toBe(0);
    const reader = await stalledReader(running.port);
    // A paused client sees nothing of the cut: wait for the server to count it (the test's timeout
    // is the bound), then read what was sent before and see the connection end short of the answer.
    while ((await disconnects(registry)) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await disconnects(registry)).toBe(1);
    reader.socket.resume();
    await reader.closed;
    expect(reader.received()).toBeLessThan(ANSWER_BYTES);
  });

  it("lets a client that keeps reading take the whole answer", async () => {
    const { running, registry, finished } = await serveBigAnswer(5_000);
    const socket = net.connect(running.port, "127.0.0.1");
    let received = 0;
    const done = new Promise<void>((resolve) => {
      socket.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received >= ANSWER_BYTES) resolve(); // headers come first: the body is then complete
      });
    });
    socket.write("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    await done;
    expect(await finished).toBe(true);
    socket.destroy();
    expect(await disconnects(registry)).toBe(0);
  });
});
