import { createHash } from "node:crypto";
import type { HTTPGraphQLRequest } from "@apollo/server";
import { type DocumentNode, Kind, print, valueFromASTUntyped } from "graphql";
import { Parser } from "graphql/language/parser.js";
import { MAX_DOCUMENT_TOKENS } from "./validation-work.ts";

// The response cache's one key function (gateway/response-cache.ts and its byte path,
// gateway/response-replay.ts, both key by it). A key names what decides an answer, and nothing else:
//
// - the operation, normalised: the document parsed and printed again, so whitespace, commas and
//   comments do not count; an omitted operationName is the document's only operation's name;
// - only the variables that operation declares, canonicalised: an undeclared variable is ignored,
//   a declared one left out takes its default, and input objects' keys are sorted;
// - the Accept header (it chooses the content type) and the data generation.
//
// So a client cannot make new entries of one answer by adding a comment, a space or an unused
// variable. The fields are read from the request exactly as Apollo Server reads them (GET and POST
// alike); anything this reader is unsure of — another method, a GET with a Content-Type, repeated
// or malformed parameters, unknown extensions, a hash that does not match the text, a document
// that does not parse or has no such operation — has no key and goes to Apollo Server uncached.
// A key says when its text was parsed for this very request (not among the remembered documents),
// with its tokens: the points budget prices that work as a new document's (gateway/points-budget.ts).

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Documents parsed and normalised, by the SHA-256 of their text (an APQ hash finds its text's). */
const MAX_DOCUMENTS = 2000;
/**
 * The characters the remembered documents keep (names, variables, defaults), in all: past it the
 * least recently used are forgotten, so memory stays bounded whatever documents clients send.
 * Bounded by what is kept, not by each text's length: a long text (blanks, comments, a large default)
 * parsed again at each request was priced nowhere when it had no key (an operation name not in it),
 * since Apollo Server remembers it and prices no new document.
 */
const MAX_KEPT_CHARS = 8 * 1024 * 1024;

/** About the characters a normalised document keeps: its operations' names, variables and defaults. */
function keptChars(normalised: Normalised): number {
  let chars = 0;
  for (const operation of normalised?.operations ?? []) {
    chars += (operation.name?.length ?? 0) + 1;
    for (const variable of operation.variables) chars += variable.name.length + 1 + (variable.hasDefault ? (JSON.stringify(variable.default) ?? "").length : 0);
  }
  return chars;
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);

/** A field that is absent, null, or an object (Apollo Server's `variables` / `extensions`); false: anything else. */
function optionalRecord(value: unknown): Json | undefined | false {
  if (value === undefined || value === null) return undefined;
  return isRecord(value) ? value : false;
}

/** A JSON object search parameter given at most once; false: repeated, not JSON, or not an object. */
function searchRecord(params: URLSearchParams, name: string): Json | undefined | false {
  const values = params.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) return false;
  try {
    return optionalRecord(JSON.parse(values[0]!) as unknown) ?? false;
  } catch {
    return false;
  }
}

function searchString(params: URLSearchParams, name: string): string | undefined | false {
  const values = params.getAll(name);
  return values.length > 1 ? false : values[0];
}

/** The GraphQL fields of a request as Apollo Server reads them (runHttpQuery), or undefined when unsure. */
function fieldsOf(request: HTTPGraphQLRequest): { query?: string; operationName?: string; variables?: Json; extensions?: Json } | undefined {
  if (request.method === "GET") {
    if (request.headers.get("content-type") !== undefined) return undefined;
    const params = new URLSearchParams(request.search);
    const query = searchString(params, "query");
    const operationName = searchString(params, "operationName");
    const variables = searchRecord(params, "variables");
    const extensions = searchRecord(params, "extensions");
    if (query === false || operationName === false || variables === false || extensions === false) return undefined;
    return { query, operationName, variables, extensions };
  }
  if (request.method !== "POST" || !isRecord(request.body) || Object.keys(request.body).length === 0) return undefined;
  const { query, operationName } = request.body;
  const variables = optionalRecord(request.body.variables);
  const extensions = optionalRecord(request.body.extensions);
  if (variables === false || extensions === false) return undefined;
  if (query !== undefined && query !== null && typeof query !== "string") return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== "string") return undefined;
  return { query: query ?? undefined, operationName: operationName ?? undefined, variables, extensions };
}

/** The persisted query hash a request carries: undefined (none), a lowercase SHA-256, or false (anything else). */
function persistedHash(extensions: Json | undefined): string | undefined | false {
  if (!extensions) return undefined;
  const names = Object.keys(extensions);
  if (names.length === 0) return undefined;
  if (names.length !== 1 || names[0] !== "persistedQuery") return false;
  const persisted = extensions.persistedQuery;
  if (!isRecord(persisted) || Object.keys(persisted).length !== 2 || persisted.version !== 1) return false;
  const hash = persisted.sha256Hash;
  return typeof hash === "string" && SHA256_HEX.test(hash) ? hash : false;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** What a key needs of an operation: its name and the variables it declares, with their defaults. */
interface Operation {
  name: string | null;
  variables: { name: string; hasDefault: boolean; default: unknown }[];
}

/**
 * A parsed document: the SHA-256 of its printed form, its operations and its tokens (comments not
 * counted, as tokensOf counts them for the new documents' price); null: it does not parse (within
 * MAX_DOCUMENT_TOKENS, which Apollo Server refuses past too).
 */
type Normalised = { printed: string; operations: Operation[]; tokens: number } | null;

function normalise(text: string): Normalised {
  let document: DocumentNode;
  let tokens: number;
  try {
    // The parser counts the tokens for its maxTokens anyway; a document parsed with locations, for
    // tokensOf to count, doubled the extra CPU of a new text's hit (bench/document-cost.ts).
    const parser = new Parser(text, { noLocation: true, maxTokens: MAX_DOCUMENT_TOKENS });
    document = parser.parseDocument();
    tokens = parser.tokenCount;
  } catch {
    return null;
  }
  const operations: Operation[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    operations.push({
      name: definition.name?.value ?? null,
      variables: (definition.variableDefinitions ?? []).map((v) => ({
        name: v.variable.name.value,
        hasDefault: v.defaultValue !== undefined,
        default: v.defaultValue === undefined ? undefined : valueFromASTUntyped(v.defaultValue),
      })),
    });
  }
  return { printed: sha256(print(document)), operations, tokens };
}

/** Normalised documents by text hash, least recently used first: a document is parsed once, not per request. */
const documents = new Map<string, { normalised: Normalised; chars: number }>();
let keptInAll = 0;

function remember(hash: string, normalised: Normalised, chars = keptChars(normalised)): Normalised {
  documents.set(hash, { normalised, chars });
  keptInAll += chars;
  while (documents.size > MAX_DOCUMENTS || keptInAll > MAX_KEPT_CHARS) forget(documents.keys().next().value!);
  return normalised;
}

function forget(hash: string): void {
  keptInAll -= documents.get(hash)?.chars ?? 0;
  documents.delete(hash);
}

/**
 * The normalised document of a request: found by its text's hash (or its APQ hash) when this
 * process remembers it, else parsed from its text for this request (`parsed`).
 */
function documentOf(text: string | undefined, hash: string): { document: Normalised; parsed: boolean } | undefined {
  const known = documents.get(hash);
  if (known !== undefined) {
    forget(hash);
    return { document: remember(hash, known.normalised, known.chars), parsed: false };
  }
  if (text === undefined) return undefined;
  const document = normalise(text);
  return { document: remember(hash, document), parsed: true };
}

/** A JSON value with every object's keys in order: two spellings of one input give one key. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isRecord(value)) return value;
  // No prototype: a key named __proto__ (JSON.parse makes it an own property) stays a key, not a prototype that JSON.stringify drops.
  const sorted: Json = Object.create(null) as Json;
  for (const name of Object.keys(value).sort()) sorted[name] = canonical(value[name]);
  return sorted;
}

/** The operation's declared variables as it will run them: given, else its default; undeclared ones dropped. */
function declaredVariables(operation: Operation, given: Json): [string, unknown][] {
  const values: [string, unknown][] = [];
  for (const variable of operation.variables) {
    if (Object.hasOwn(given, variable.name)) values.push([variable.name, canonical(given[variable.name])]);
    else if (variable.hasDefault) values.push([variable.name, canonical(variable.default)]);
  }
  return values.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A request's cache key, and what finding it cost when its text was not remembered. */
export interface CacheKey {
  key: string;
  /** The tokens of the text parsed and printed for this request (tokensOf); absent when the document was remembered. */
  parsedTokens?: number;
}

/**
 * The cache key of a request under a data generation, or undefined: not cacheable, Apollo Server
 * answers it. Two requests with one key run the same normalised operation with the same declared
 * variables and the same Accept header.
 */
export function cacheKeyOf(request: HTTPGraphQLRequest, generation: string): CacheKey | undefined {
  const fields = fieldsOf(request);
  if (!fields) return undefined;
  const hash = persistedHash(fields.extensions);
  if (hash === false) return undefined;
  const textHash = fields.query !== undefined ? sha256(fields.query) : hash;
  // No query at all, or a hash Apollo Server would refuse as not the text's.
  if (textHash === undefined || (hash !== undefined && hash !== textHash)) return undefined;
  const found = documentOf(fields.query, textHash);
  const document = found?.document;
  if (!document) return undefined;
  const operation =
    fields.operationName !== undefined
      ? document.operations.find((o) => o.name === fields.operationName)
      : document.operations.length === 1
        ? document.operations[0]
        : undefined;
  if (!operation) return undefined;
  const accept = request.headers.get("accept") ?? "";
  try {
    const key = sha256(JSON.stringify([generation, document.printed, operation.name, declaredVariables(operation, fields.variables ?? {}), accept]));
    return found.parsed ? { key, parsedTokens: document.tokens } : { key };
  } catch {
    // Variables nested deeper than the stack allows (a 64 KiB body holds 30 000 levels): not
    // cacheable; Apollo Server answers them with its own error.
    return undefined;
  }
}
