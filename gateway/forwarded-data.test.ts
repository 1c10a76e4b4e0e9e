import { readFileSync } from "node:fs";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parse, type OperationDefinitionNode } from "graphql";
import { describe, expect, it } from "vitest";
import { runInRequestScope } from "../core/request-scope.ts";
import { renderedBytesOf } from "../core/http.ts";
import { actualCost, objectKeysOf } from "./actual-cost.ts";
import { pricedApiSchemaOf } from "./cost-directives.ts";
import { costViewOf, dataBytesOf, keepDataBytes, readWithoutData, stringifyResult } from "./forwarded-data.ts";

// The gateway writes a subgraph's bytes of `data` when that data is its answer, and otherwise
// exactly what Apollo Server's default (JSON.stringify + newline) writes.

describe("the bytes of a subgraph's data", () => {
  it("are cut from a body of data, or data and extensions, with or without the newline", () => {
    expect(dataBytesOf('{"data":{"a":[1,2]}}\n', undefined)).toBe('{"a":[1,2]}');
    expect(dataBytesOf('{"data":{"a":[1,2]}}', undefined)).toBe('{"a":[1,2]}');
    const extensions = { readAt: [{ chainId: 1, block: "7", hash: "0x" }] };
    expect(dataBytesOf(`{"data":{"a":"}"},"extensions":${JSON.stringify(extensions)}}\n`, extensions)).toBe('{"a":"}"}');
  });

  it("are not kept from a body that is anything else", () => {
    const extensions = { readAt: [] };
    // Extensions that are not the ones parsed, errors first, a body that is not an object of data.
    expect(dataBytesOf('{"data":{"a":1},"extensions":{"readAt":[1]}}\n', extensions)).toBeUndefined();
    expect(dataBytesOf('{"data":{"a":1}}\n', extensions)).toBeUndefined();
    expect(dataBytesOf('{"errors":[],"data":{"a":1}}\n', undefined)).toBeUndefined();
    expect(dataBytesOf('{"data":}', undefined)).toBeUndefined();
    expect(dataBytesOf("[]", undefined)).toBeUndefined();
  });
});

describe("stringifyResult", () => {
  it("writes what JSON.stringify writes for data it has no bytes of", () => {
    const values = [
      { data: { a: 1, b: ["x", null] } },
      { errors: [{ message: "m", path: ["a"] }], data: { a: null }, extensions: { cost: { requested: 1, actual: 1 } } },
      { errors: undefined, data: null, extensions: undefined },
      { data: { "\u2028": "é\u0000" }, extensions: { readAt: [] } },
    ];
    for (const value of values) expect(stringifyResult(value)).toBe(`${JSON.stringify(value)}\n`);
  });

  it("writes the subgraph's bytes for the data it sent, with the answer's own extensions", () => {
    const body = '{"data":{ "betResults": [ {"betId": "1"} ] }}\n';
    const answer = JSON.parse(body) as { data: Record<string, unknown> };
    keepDataBytes(answer, body);
    const extensions = { cost: { requested: 15, actual: 11 } };
    expect(stringifyResult({ data: answer.data })).toBe('{"data":{ "betResults": [ {"betId": "1"} ] }}\n');
    expect(stringifyResult({ data: answer.data, extensions })).toBe(
      `{"data":{ "betResults": [ {"betId": "1"} ] },"extensions":${JSON.stringify(extensions)}}\n`,
    );
    // With errors, or for another object (a copy, a rewrite), the answer is serialised.
    expect(stringifyResult({ data: answer.data, errors: [{ message: "m" }] })).toBe(`${JSON.stringify({ data: answer.data, errors: [{ message: "m" }] })}\n`);
    expect(stringifyResult({ data: { ...answer.data } })).toBe('{"data":{"betResults":[{"betId":"1"}]}}\n');
  });

  it("keeps nothing from an answer with errors", () => {
    const body = '{"errors":[{"message":"m"}],"data":{ "a": 1 }}\n';
    const answer = JSON.parse(body) as { data: Record<string, unknown> };
    keepDataBytes(answer, body);
    expect(stringifyResult({ data: answer.data })).toBe('{"data":{"a":1}}\n');
  });
});

describe("the bytes of a rendered answer", () => {
  it("are the UTF-8 of its string, put together from the subgraph's bytes, for that string once, in its request", () => {
    const body = '{"data":{"name":"Ünïcode € 🎲 \u2028"},"extensions":{"readAt":[{"hash":"é"}]}}\n';
    const answer = JSON.parse(body) as { data: Record<string, unknown>; extensions: Record<string, unknown> };
    const extensions = { readAt: answer.extensions.readAt, cost: { requested: 10, actual: 10 } };
    runInRequestScope("r1", () => {
      keepDataBytes(answer, body, Buffer.from(body));
      const text = stringifyResult({ data: answer.data, extensions });
      expect(text).toBe(`${JSON.stringify({ data: answer.data, extensions })}\n`);
      expect(renderedBytesOf(`${text} `)).toBeUndefined();
      expect(renderedBytesOf(text)).toEqual(Buffer.from(text));
      expect(renderedBytesOf(text)).toBeUndefined(); // handed out once
    });
    // Outside a request nothing is kept for the writer: it encodes the string.
    expect(renderedBytesOf(stringifyResult({ data: answer.data }))).toBeUndefined();
  });

  it("are not put together without the subgraph's bytes", () => {
    const body = '{"data":{"a":"é"}}';
    const answer = JSON.parse(body) as { data: Record<string, unknown> };
    runInRequestScope("r2", () => {
      keepDataBytes(answer, body);
      const text = stringifyResult({ data: answer.data });
      expect(text).toBe('{"data":{"a":"é"}}\n');
      expect(renderedBytesOf(text)).toBeUndefined();
    });
  });
});

describe("an answer read without parsing its data", () => {
  const keys = new Set(["betResults", "result"]);

  it("is read from a body of data, or data and extensions, with or without the newline; its data reads as JSON.parse gives it", () => {
    const data = { betResults: [{ betId: "1", result: { outcome: "WIN", note: "é € 🎲 \u2028" } }, null] };
    const extensions = { readAt: [{ chainId: 1, block: "7", hash: "0xé" }] };
    for (const body of [
      `${JSON.stringify({ data })}\n`,
      JSON.stringify({ data }),
      `${JSON.stringify({ data, extensions })}\n`,
      JSON.stringify({ data, extensions }),
    ]) {
      const answer = readWithoutData(body, Buffer.from(body), keys);
      const parsed = JSON.parse(body) as { data: Record<string, unknown>; extensions?: Record<string, unknown> };
      expect(answer?.extensions, body).toEqual(parsed.extensions);
      expect(JSON.stringify(answer?.data), body).toBe(JSON.stringify(parsed.data));
      expect({ ...answer?.data }, body).toEqual(parsed.data);
      // Written with the subgraph's bytes of data, whatever it holds.
      runInRequestScope("r3", () => {
        const text = stringifyResult({ data: answer!.data, extensions: { cost: { requested: 1, actual: 1 } } });
        expect(text).toBe(`${JSON.stringify({ data: parsed.data, extensions: { cost: { requested: 1, actual: 1 } } })}\n`);
        expect(renderedBytesOf(text)).toEqual(Buffer.from(text));
      });
    }
  });

  it("is not read from a body with errors (after data too), other members, data that is not an object, or garbage", () => {
    const bodies = [
      '{"errors":[{"message":"m"}],"data":{"a":1}}',
      '{"data":{"a":1},"errors":[{"message":"m"}]}\n',
      '{"data":{"a":1},"extensions":{"readAt":[]},"errors":[{"message":"m"}]}',
      '{"data":{"a":1},"extensions":[]}',
      '{"data":{"a":1},"extensions":{"a":1}}}',
      '{"data":{"a":1},"extensions":{"a":1}',
      '{"data":null}',
      '{"data":{"a":1}',
      '{"data":{"a":1}} ',
      '{"data":{"a":01}}',
      '{"data":{"a":"\u0001"}}',
      '{"data":{"a":1}}}',
      "<html></html>",
    ];
    for (const body of bodies) expect(readWithoutData(body, Buffer.from(body), keys), body).toBeUndefined();
  });

  it("costs what its parsed data costs", () => {
    const schema = pricedApiSchemaOf(readFileSync("supergraph.graphql", "utf8"));
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId r: result { outcome proof { piA verified } } } }`;
    const document = parse(query);
    const operation = document.definitions[0] as OperationDefinitionNode;
    const ids = ["1", "2", "1", "3", "4"];
    const proof = { piA: ["1", "2"], verified: true };
    const data = {
      betResults: [
        { betId: "1", r: { outcome: "WIN", proof } },
        { betId: "2", r: null },
        { betId: "1", r: { outcome: "WIN", proof } },
        null,
        { betId: "4", r: { outcome: "LOSS", proof: null } },
      ],
    };
    const body = JSON.stringify({ data });
    const answer = readWithoutData(body, Buffer.from(body), objectKeysOf(document))!;
    expect(actualCost(schema, document, operation, { ids }, costViewOf(answer.data))).toBe(actualCost(schema, document, operation, { ids }, data));
  });
});

// V8's scavenger holds a WeakMap's values whatever their keys: what was kept by a data object in
// one outlived its answer, and each subgraph body (110 KB for betResults(100)) was promoted to the
// old generation (~100 KB promoted per answer in the separate-process gateway, issue 24). What is
// kept for a data object must go with it: bodies read and dropped, scavenge after scavenge, stay young.
describe("what is kept for an answer's data", () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as (options?: { type: "minor" }) => void;
  const oldSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === "old_space")?.space_used_size ?? 0;
  const data = { betResults: Array.from({ length: 300 }, (_, i) => ({ betId: String(i), result: { proof: "0xab".repeat(40) } })) };

  /** Old-generation bytes gained per answer `read` makes of a fresh body and drops, a scavenge after each. */
  function promotedPerAnswer(read: (text: string, bytes: Buffer) => object | undefined): number {
    gc();
    const before = oldSpace();
    for (let i = 0; i < 40; i++) {
      const text = `${JSON.stringify({ data: { ...data, n: i } })}\n`;
      expect(read(text, Buffer.from(text))).toBeDefined();
      gc({ type: "minor" });
    }
    return (oldSpace() - before) / 40;
  }

  it("goes with it: the subgraph's body is not promoted, read without parsing or parsed", () => {
    const bodySize = JSON.stringify({ data }).length; // ~40 KB
    const keys = new Set(["betResults", "result"]);
    expect(promotedPerAnswer((text, bytes) => readWithoutData(text, bytes, keys))).toBeLessThan(bodySize / 4);
    const parsed = (text: string, bytes: Buffer) => {
      const answer = JSON.parse(text) as { data: object };
      keepDataBytes(answer, text, bytes);
      return answer;
    };
    expect(promotedPerAnswer(parsed)).toBeLessThan(bodySize / 4);
  });
});
