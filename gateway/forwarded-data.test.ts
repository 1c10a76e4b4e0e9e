import { describe, expect, it } from "vitest";
import { runInRequestScope } from "../core/request-scope.ts";
import { renderedBytesOf } from "../core/http.ts";
import { dataBytesOf, keepDataBytes, stringifyResult } from "./forwarded-data.ts";

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
