import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { GraphQLDataSourceProcessOptions } from "@apollo/gateway";
import { GraphQLDataSourceRequestKind } from "@apollo/gateway/dist/datasources/types.js";
import { GraphQLError, parse } from "graphql";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ServiceUnavailableError } from "../core/errors.ts";
import { READ_PIN_HEADER, READ_PINS_HONOURED_HEADER, runInRequestScope } from "../core/request-scope.ts";
import type { InProcessAnswer } from "../core/schema.ts";
import { renderedBytesOf } from "../core/http.ts";
import { answeredWhole, stringifyResult } from "./forwarded-data.ts";
import { createSubgraphAgent, InProcessSubgraphSource, SubgraphDataSource, type InProcessSubgraph } from "./subgraph-source.ts";

// The gateway → subgraph client against a real HTTP server on loopback: what it sends, how it
// reads every kind of answer, and that it keeps its connections open between requests.

interface Seen {
  body: { query: string; variables?: Record<string, unknown>; operationName?: string };
  headers: IncomingMessage["headers"];
}

let answer: (res: ServerResponse) => void;
const seen: Seen[] = [];
const sockets = new Set<unknown>();
let server: Server;
let url: string;
const agent = createSubgraphAgent();

beforeAll(async () => {
  server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    sockets.add(req.socket);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      seen.push({ body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Seen["body"], headers: req.headers });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterEach(() => {
  seen.length = 0;
});
afterAll(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return (res: ServerResponse) => {
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  };
}

function operation(hints: unknown[]): GraphQLDataSourceProcessOptions {
  const options = {
    kind: GraphQLDataSourceRequestKind.INCOMING_OPERATION,
    request: { query: "query Q($id: ID!) { bet(id: $id) { id } }", variables: { id: "7" }, operationName: "Q" },
    incomingRequestContext: { overallCachePolicy: { restrict: (hint: unknown) => hints.push(hint) } },
    context: {},
  };
  // Only the fields the data source reads are built; the rest of Apollo's request context is not needed.
  return options as unknown as GraphQLDataSourceProcessOptions;
}

describe("SubgraphDataSource", () => {
  it("posts the operation as JSON with the request id and merges the subgraph's Cache-Control", async () => {
    answer = json(200, { data: { bet: { id: "7" } } }, { "cache-control": "max-age=60, public" });
    const hints: unknown[] = [];
    const source = new SubgraphDataSource("results", url, agent);
    const response = await runInRequestScope("req-123", () => source.process(operation(hints)));
    expect(response).toEqual({ data: { bet: { id: "7" } } });
    expect(seen[0]!.body).toEqual({ query: "query Q($id: ID!) { bet(id: $id) { id } }", variables: { id: "7" }, operationName: "Q" });
    expect(seen[0]!.headers["content-type"]).toBe("application/json");
    expect(seen[0]!.headers["x-request-id"]).toBe("req-123");
    expect(hints).toEqual([{ maxAge: 60, scope: "PUBLIC" }]);
  });

  it("answers with the UTF-8 of what Apollo Server's default writes, from the subgraph's bytes when they are valid UTF-8", async () => {
    const data = '{"data":{"bet":{"id":"7","name":"é € 🎲 \u2028"}},"extensions":{"readAt":[]}}';
    const invalid = Buffer.from(data.replace("é", "x"));
    invalid[invalid.indexOf("x")] = 0xff; // decoded as U+FFFD, which is not this byte
    const bodies: [string, Buffer, boolean][] = [
      ["UTF-8", Buffer.from(data), true],
      ["UTF-8 after a byte order mark", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(data)]), true],
      ["invalid UTF-8", invalid, false],
    ];
    for (const [what, bytes, kept] of bodies) {
      answer = (res) => {
        res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
        res.end(bytes);
      };
      const source = new SubgraphDataSource("results", url, agent);
      await runInRequestScope(`req-${what}`, async () => {
        const response = await source.process(operation([]));
        const value = { data: response.data, extensions: { ...response.extensions, cost: { requested: 10, actual: 10 } } };
        const text = stringifyResult(value);
        expect(text, what).toBe(`${JSON.stringify(value)}\n`);
        const written = renderedBytesOf(text);
        expect(written !== undefined, what).toBe(kept);
        expect((written ?? Buffer.from(text)).equals(Buffer.from(text)), what).toBe(true);
      });
    }
  });

  it("reads an answer the gateway forwards whole without parsing its data, and parses every other answer to such a request", async () => {
    const document = parse("query Q($id: ID!) { bet(id: $id) { id result { won } } }");
    const whole = () => {
      const options = operation([]);
      return { ...options, request: answeredWhole({ ...options.request }), document } as GraphQLDataSourceProcessOptions;
    };
    const data = '{"bet":{"id":"7","name":"é € 🎲","result":{"won":true}}}';
    answer = (res) => res.writeHead(200, { "content-type": "application/json" }).end(`{"data":${data},"extensions":{"readAt":[]}}\n`);
    const parse_ = vi.spyOn(JSON, "parse");
    const response = await new SubgraphDataSource("results", url, agent).process(whole());
    const parsedTexts = parse_.mock.calls.map(([text]) => text);
    parse_.mockRestore();
    expect(parsedTexts.filter((text) => text.includes('"name"'))).toEqual([]);
    expect(response.extensions).toEqual({ readAt: [] });
    expect({ ...response.data }).toEqual(JSON.parse(data));
    // Errors after its data, garbage: read as every answer is.
    answer = json(200, { data: { bet: null }, errors: [{ message: "m", path: ["bet"] }] });
    expect(await new SubgraphDataSource("results", url, agent).process(whole())).toEqual({ data: { bet: null }, errors: [{ message: "m", path: ["bet"] }] });
    answer = (res) => res.writeHead(200, { "content-type": "application/json" }).end('{"data":{"bet":{"id":"7"}}');
    await expect(new SubgraphDataSource("results", url, agent).process(whole())).rejects.toThrow(/Expected JSON response body/);
  });

  it("treats an answer without Cache-Control as not cacheable", async () => {
    answer = json(200, { data: { bet: null } });
    const hints: unknown[] = [];
    await new SubgraphDataSource("results", url, agent).process(operation(hints));
    expect(hints).toEqual([{ maxAge: 0 }]);
  });

  it("passes a subgraph's HTTP 400 GraphQL refusal on as GraphQL errors", async () => {
    const refusal = { errors: [{ message: "Invalid betId", extensions: { code: "BAD_USER_INPUT" } }] };
    answer = json(400, refusal);
    const response = await new SubgraphDataSource("results", url, agent).process(operation([]));
    expect(response).toEqual(refusal);
  });

  it("turns any other failing status into an error naming the status", async () => {
    answer = (res) => res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
    const failure = await new SubgraphDataSource("results", url, agent).process(operation([])).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GraphQLError);
    expect((failure as GraphQLError).message).toBe("502: Bad Gateway");
    answer = json(400, { message: "no errors field" });
    expect(((await new SubgraphDataSource("results", url, agent).process(operation([])).catch((e: unknown) => e)) as GraphQLError).message).toBe(
      "400: Bad Request",
    );
  });

  it("rejects a 200 whose body is not a JSON object", async () => {
    answer = (res) => res.writeHead(200, { "content-type": "text/html" }).end("<html></html>");
    await expect(new SubgraphDataSource("results", url, agent).process(operation([]))).rejects.toThrow(/Expected JSON response body/);
  });

  it("reports a subgraph that does not answer as SERVICE_UNAVAILABLE, naming it without host or port", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await new SubgraphDataSource("history", `http://127.0.0.1:${port}/graphql`, agent).process(operation([])).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ServiceUnavailableError);
    expect((failure as ServiceUnavailableError).message).toBe("The history service is unavailable");
    expect(JSON.stringify(failure)).not.toContain(String(port));
  });

  it("keeps its connections open: sequential requests reuse their sockets", async () => {
    answer = json(200, { data: { bet: null } });
    sockets.clear();
    const own = createSubgraphAgent();
    const source = new SubgraphDataSource("results", url, own);
    for (let i = 0; i < 20; i++) await source.process(operation([]));
    await own.close();
    expect(seen).toHaveLength(20);
    // undici may open a second connection while the first is still settling after a response;
    // without keep-alive each of the 20 requests would need its own.
    expect(sockets.size).toBeLessThanOrEqual(2);
  });

  it("merges identical queries in flight into one request, and only while it is in flight", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    answer = (res) => void held.then(() => json(200, { data: { bet: { id: "7" } } })(res));
    const source = new SubgraphDataSource("results", url, agent);
    const asked = [runInRequestScope("a", () => source.process(operation([]))), runInRequestScope("b", () => source.process(operation([])))];
    const other = { ...operation([]), request: { query: "query Q($id: ID!) { bet(id: $id) { id } }", variables: { id: "8" }, operationName: "Q" } };
    asked.push(source.process(other as GraphQLDataSourceProcessOptions));
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    const [first, second] = await Promise.all(asked);
    expect(seen.map((s) => s.body.variables)).toEqual([{ id: "7" }, { id: "8" }]);
    expect(seen[0]!.headers["x-request-id"]).toBe("a");
    expect(second).toEqual(first);
    expect(second).not.toBe(first); // each asker gets its own objects to merge into
    answer = json(200, { data: { bet: { id: "7" } } });
    await source.process(operation([]));
    expect(seen).toHaveLength(3); // nothing kept once the request is done
  });

  it("pins one read server per gateway request: every subgraph call of it carries the same x-read-pin, another request another", async () => {
    answer = json(200, { data: { bet: { id: "7" } } });
    const results = new SubgraphDataSource("results", url, agent);
    const history = new SubgraphDataSource("history", url, agent);
    await runInRequestScope("a", async () => {
      await history.process(operation([]));
      await results.process(operation([]));
    });
    await runInRequestScope("a", () => results.process(operation([])));
    await results.process(operation([])); // no gateway request: no pin (the subgraph picks as for a direct request)
    const pins = seen.map((s) => s.headers[READ_PIN_HEADER]);
    expect(pins[0]).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
    expect(pins[1]).toBe(pins[0]);
    expect(pins[2]).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
    expect(pins[2]).not.toBe(pins[0]); // a new request (even with the same request id) is pinned anew
    expect(pins[3]).toBeUndefined();
  });

  /** Two requests, b and c, each pinned by a first call of its own, then asking `source` what request a has in flight. */
  async function pinnedRequestsAskingWhatIsInFlight(source: SubgraphDataSource, honoured: Record<string, string>) {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Only the shared query is held (seen last: it is the request being answered); first calls answer at once.
    answer = (res) => {
      const reply = json(200, { data: { bet: { id: "7" } } }, honoured);
      if (seen.at(-1)?.body.query === operation([]).request.query) void held.then(() => reply(res));
      else reply(res);
    };
    const other = new SubgraphDataSource("results", url, agent);
    const pinnedBy = (id: string) =>
      runInRequestScope(id, async () => {
        await other.process({ ...operation([]), request: { query: `query First { ${id} }` } } as GraphQLDataSourceProcessOptions);
        await source.process(operation([]));
      });
    const leader = runInRequestScope("a", () => source.process(operation([])));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const later = [pinnedBy("b"), pinnedBy("c")];
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await Promise.all([leader, ...later]);
    return seen.filter((s) => s.body.query === operation([]).request.query).map((s) => s.headers["x-request-id"]);
  }

  it("a subgraph that reads by pin never merges calls of different pins; one that does not, does", async () => {
    const honouring = new SubgraphDataSource("history", url, agent);
    answer = json(200, { data: { bet: { id: "7" } } }, { [READ_PINS_HONOURED_HEADER]: "1" });
    await honouring.process(operation([]));
    seen.length = 0;
    expect(await pinnedRequestsAskingWhatIsInFlight(honouring, { [READ_PINS_HONOURED_HEADER]: "1" })).toEqual(["a", "b", "c"]);

    // Without replicas a subgraph reads everything from one server: b and c share a's call.
    const single = new SubgraphDataSource("history", url, agent);
    answer = json(200, { data: { bet: { id: "7" } } });
    await single.process(operation([]));
    seen.length = 0;
    expect(await pinnedRequestsAskingWhatIsInFlight(single, {})).toEqual(["a"]);

    // Once it answers that it reads by pin (restarted with replicas), pins keep calls apart again.
    answer = json(200, { data: { bet: { id: "7" } } }, { [READ_PINS_HONOURED_HEADER]: "1" });
    await single.process(operation([]));
    seen.length = 0;
    expect(await pinnedRequestsAskingWhatIsInFlight(single, { [READ_PINS_HONOURED_HEADER]: "1" })).toEqual(["a", "b", "c"]);
  });

  it("a request whose first call joins an identical query in flight reads where that query reads; a pinned one joins only its own pin", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    answer = (res) => void held.then(() => json(200, { data: { bet: { id: "7" } } }, { [READ_PINS_HONOURED_HEADER]: "1" })(res));
    const source = new SubgraphDataSource("history", url, agent);
    const other = new SubgraphDataSource("results", url, agent);
    let pinnedFirst: Promise<unknown> | undefined;
    const leader = runInRequestScope("a", () => source.process(operation([])));
    const joiner = runInRequestScope("b", async () => {
      await source.process(operation([]));
      answer = json(200, { data: { bet: { id: "7" } } }, { [READ_PINS_HONOURED_HEADER]: "1" });
      await other.process(operation([]));
    });
    // Request c is pinned by a call of its own first: its identical query is not merged with a's.
    const pinned = runInRequestScope("c", async () => {
      pinnedFirst = other.process({ ...operation([]), request: { query: "query R { x }" } } as GraphQLDataSourceProcessOptions);
      await source.process(operation([]));
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await Promise.all([leader, joiner, pinned, pinnedFirst]);
    const byId = (id: string) => seen.filter((s) => s.headers["x-request-id"] === id).map((s) => s.headers[READ_PIN_HEADER]);
    const [aPin] = byId("a");
    expect(aPin).toBeDefined();
    // b's first call was a's request; its next call (results) carries a's pin.
    expect(byId("b")).toEqual([aPin]);
    const cPins = byId("c");
    expect(cPins).toHaveLength(2);
    expect(cPins[0]).not.toBe(aPin);
    expect(cPins[1]).toBe(cPins[0]);
  });

  it("never merges mutations", async () => {
    answer = json(200, { data: { ok: true } });
    const source = new SubgraphDataSource("results", url, agent);
    const mutation = { ...operation([]), request: { query: "mutation M { ok }" } };
    await Promise.all([source.process(mutation as GraphQLDataSourceProcessOptions), source.process(mutation as GraphQLDataSourceProcessOptions)]);
    expect(seen).toHaveLength(2);
  });
});

describe("InProcessSubgraphSource", () => {
  const answering = (answer: () => Promise<InProcessAnswer>): InProcessSubgraph => ({ execute: answer });

  it("reports a subgraph that is not running as SERVICE_UNAVAILABLE, naming it", async () => {
    const source = new InProcessSubgraphSource(
      "history",
      answering(async () => ({ status: 503, body: {} })),
    );
    const failure = await source.process(operation([])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceUnavailableError);
    expect((failure as ServiceUnavailableError).extensions).toMatchObject({ serviceName: "history" });
  });

  it("reports a subgraph that fails inside (a 500, or a throw) as a failing status, not as unavailable — as over HTTP", async () => {
    for (const failing of [async () => ({ status: 500, body: {} }), async (): Promise<InProcessAnswer> => Promise.reject(new Error("context failed"))]) {
      const failure = await new InProcessSubgraphSource("results", answering(failing)).process(operation([])).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(GraphQLError);
      expect(failure).not.toBeInstanceOf(ServiceUnavailableError);
      expect((failure as GraphQLError).message).toBe("500: Internal Server Error");
    }
  });

  it("passes a refusal's errors on and merges Cache-Control", async () => {
    const hints: unknown[] = [];
    const refusal = { errors: [{ message: "bad", extensions: { code: "BAD_USER_INPUT" } }] };
    const source = new InProcessSubgraphSource(
      "results",
      answering(async () => ({ status: 400, body: refusal, cacheControl: "no-store" })),
    );
    expect(await source.process(operation(hints))).toEqual(refusal);
    expect(hints).toEqual([{ maxAge: 0 }]);
  });

  it("shares an identical call in flight between requests, each with its own copy; apart per pin when the subgraph reads by pin", async () => {
    for (const honoursReadPins of [false, true]) {
      let executions = 0;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const subgraph: InProcessSubgraph = {
        honoursReadPins,
        execute: async (request) => {
          executions++;
          if (request.query === operation([]).request.query) await held;
          return { status: 200, body: { data: { bet: { id: "7", nested: { n: 1 } } } } };
        },
      };
      const source = new InProcessSubgraphSource("history", subgraph);
      // Each request is pinned by a first call of its own, then asks the same thing.
      const askers = ["a", "b", "c"].map((id) =>
        runInRequestScope(id, async () => {
          await source.process({ ...operation([]), request: { query: `query First { ${id} }` } } as GraphQLDataSourceProcessOptions);
          return source.process(operation([]));
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      release();
      const answers = (await Promise.all(askers)) as { data: { bet: { nested: { n: number } } } }[];
      expect(executions, `honoursReadPins ${honoursReadPins}`).toBe(honoursReadPins ? 6 : 4);
      expect(answers.map((a) => a.data.bet.nested.n)).toEqual([1, 1, 1]);
      answers[0]!.data.bet.nested.n = 2; // what the gateway's merge does to its answer
      expect(answers.slice(1).map((a) => a.data.bet.nested.n)).toEqual([1, 1]);
    }
  });
});
