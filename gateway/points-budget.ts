import type { ApolloServerPlugin, BaseContext, GraphQLRequestContextWillSendResponse } from "@apollo/server";
import { HeaderMap } from "@apollo/server";
import type { DocumentNode, GraphQLFormattedError } from "graphql";
import type { IncomingMessage, ServerResponse } from "node:http";
import { clientAddress } from "../core/client-address.ts";
import { ErrorCode } from "../core/errors.ts";
import { type CompleteAnswer, sendJson } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";
import { decide, type RateLimitDecision, type RateLimitPolicy, type RateLimitStore } from "../core/token-bucket.ts";
import { actualCost } from "./actual-cost.ts";
import { costViewOf } from "./forwarded-data.ts";
import { measuredOperation } from "./limits.ts";
import type { NewEntryBudget } from "./cache-entry-budget.ts";
import {
  MAX_DOCUMENT_TOKENS,
  NEW_DOCUMENT_BASE_TOKENS,
  newDocumentPoints,
  POINTS_PER_PARSED_TOKEN,
  syntaxErrorPoints,
  tokensOf,
  validationPoints,
} from "./validation-work.ts";

// The points budget (docs/reference/limits.md#rate-limit): each client pays for its requests in
// the currency of the query cost (gateway/limits.ts), not one token per request.
// - At the door (core/http.ts `admit`, before the body is read) every request pays
//   REQUEST_POINTS: a flood of garbage, parse errors included, is limited too, and a client whose
//   budget is dry is refused before any work.
// - Once the operation is measured (queryLimitsPlugin) and before it runs, the rest of its
//   requested cost is taken, all or nothing: HTTP 429 RATE_LIMITED when the budget cannot pay.
// - A document this gateway validated for the request adds validation's price to both costs, ran
//   or refused (gateway/validation-work.ts: free for any honest document).
// - After it ran it is settled with its actual cost (gateway/actual-cost.ts: the same prices
//   applied to the answer): the difference is refunded, or charged when the answer cost more.
//   The settlement goes to the store in the background: it never delays the answer.
// Every answer says the budget in RateLimit-* headers (points), and every answer Apollo Server
// computes says `extensions.cost = { requested, actual }`. Answers replayed from the response
// cache pay REQUEST_POINTS at the door and nothing else, unless the cache key had to parse their
// text for the request (chargeNewDocument: a new document's price, as above); their stored bytes
// never hold a cost (withoutCostExtension), since a cost belongs to the request that computed it.

/** What every request pays at the door, and the least any request costs: the HTTP exchange, parsing, validation of an ordinary document. */
export const REQUEST_POINTS = 10;
/**
 * What a request to a route beside GraphQL pays (/health, /schema.graphql, /metrics, static pages,
 * and any path that answers 404): a flat price for an answer held in memory. CSV exports price
 * their pages themselves (gateway/csv-export.ts).
 */
export const ROUTE_POINTS = 1;
/** What an answer from the response cache costs in all (its stored bytes replayed, gateway/response-replay.ts), its text remembered. */
export const CACHE_HIT_POINTS = REQUEST_POINTS;

export interface PointsBudgetSettings {
  store: RateLimitStore;
  policy: RateLimitPolicy;
  trustProxyHops: number;
  /** Each client's free tokens of new documents a minute (RATE_LIMIT_NEW_DOCUMENT_TOKENS_PER_MINUTE); every new document free when absent. */
  newDocuments?: NewEntryBudget;
  /** The clock passed to the store (the memory store runs on it; Redis on its own). Default Date.now. */
  now?: () => number;
}

/** Where the context carries the request's Charge. */
const CHARGE = Symbol("points charge");

/** What one HTTP request has paid so far, and the budget as last seen. */
interface Charge {
  key: string;
  paid: number;
  decision: RateLimitDecision | undefined;
}

/** What a cache hit whose text was parsed anew paid beyond the door: the budget after it (RateLimit-* headers), or the 429 to send instead. */
export type NewDocumentCharge = { headers: [string, string][] } | { refusal: CompleteAnswer };

/** The cost extension of an answer: its requested and actual cost in points. */
export interface CostExtension {
  requested: number;
  actual: number;
}

export interface PointsBudget {
  /** Apollo Server's plugin: list it after queryLimitsPlugin and before the response cache's plugin. */
  plugin: ApolloServerPlugin;
  /** core/http.ts's `admit`: the door; undefined without a budget (extensions.cost only). */
  admit?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** core/http.ts's `admitRoute`: ROUTE_POINTS for a route beside GraphQL or a 404; undefined without a budget. */
  admitRoute?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** Apollo Server's per-request context: carries the door's charge to the plugin. */
  context(req: IncomingMessage): BaseContext;
  /**
   * The client's budget as RateLimit-* headers without asking the store: as this process last saw
   * it, refilled at the policy's rate since (a refusal in front of the budget, gateway/in-flight.ts,
   * says it as every other answer does, without a round trip to Redis). Undefined without a budget,
   * or when this process has not seen the client's budget lately.
   */
  knownHeaders?: (req: IncomingMessage) => [string, string][] | undefined;
  /**
   * A response cache hit whose text the cache key parsed for this request (gateway/cache-key.ts,
   * `tokens` as tokensOf counts them): priced as a new document, from the same free tokens, or
   * refused; undefined when nothing more is charged. Undefined without a budget of new documents.
   */
  chargeNewDocument?: (req: IncomingMessage, tokens: number) => Promise<NewDocumentCharge | undefined>;
  /** The budget's settings, its store seen through (for the CSV export's charges: knownHeaders sees them too); undefined without a budget. */
  settings?: PointsBudgetSettings;
}

/** graphql-js's refusal of a document past its `maxTokens` (the message core/errors.ts rewords for clients). */
const OVERSIZED = /Document contains more tha[nt] \d+ tokens\. Parsing aborted\./;

/** Client budgets this process remembers for knownHeaders, the least recently seen forgotten first. */
const MAX_SEEN_BUDGETS = 10_000;

export const rateLimitHeaders = (policy: RateLimitPolicy, decision: RateLimitDecision): [string, string][] => [
  ["ratelimit-limit", String(policy.capacity)],
  ["ratelimit-remaining", String(decision.remaining)],
  ["ratelimit-reset", String(decision.resetSeconds)],
];

/** The RATE_LIMITED error of a request (or an export's page) whose cost the budget cannot pay. */
export function refusal(policy: RateLimitPolicy, cost: number, decision: RateLimitDecision): GraphQLFormattedError {
  return {
    message:
      `Rate limited: this request costs ${cost} points and ${decision.remaining} are left in this client's budget ` +
      `(${policy.capacity} points, refilled at ${policy.refillPerSecond} a second); retry after ${decision.retryAfterSeconds} s`,
    extensions: { code: ErrorCode.RateLimited, retryAfterSeconds: decision.retryAfterSeconds, cost },
  };
}

// The cost extension as Apollo Server writes it at the end of a body: the only extension there, or the last one.
// (Apollo Server ends a body with a newline.)
const ONLY_COST = /,"extensions":\{"cost":\{[^{}]*\}\}\}(\n?)$/;
const LAST_COST = /,"cost":\{[^{}]*\}\}\}(\n?)$/;

/** A computed answer's body without its per-request `extensions.cost`, as the response cache may store it. */
export function withoutCostExtension(body: string): string {
  if (ONLY_COST.test(body)) return body.replace(ONLY_COST, "}$1");
  // Only inside the extensions object (data may hold an alias named `cost`, but not after it).
  const extensions = body.lastIndexOf(',"extensions":{');
  if (extensions < 0) return body;
  return body.slice(0, extensions) + body.slice(extensions).replace(LAST_COST, "}}$1");
}

export function createPointsBudget(options: { budget?: PointsBudgetSettings; logger: Logger }): PointsBudget {
  const { budget, logger } = options;
  const now = budget?.now ?? Date.now;
  const byRequest = new WeakMap<IncomingMessage, Charge>();
  // The last budget the store answered for each client, and when (its points, not yet refilled).
  const seen = new Map<string, { points: number; at: number }>();
  const see = (key: string, decision: RateLimitDecision): RateLimitDecision => {
    seen.delete(key); // re-inserted: Map order is then least recently seen first
    // Its points, not `remaining` (which stops at 0): a budget in debt is not shown refilling early.
    seen.set(key, { points: decision.points, at: now() });
    if (seen.size > MAX_SEEN_BUDGETS) seen.delete(seen.keys().next().value!);
    return decision;
  };
  const store: RateLimitStore | undefined = budget && {
    take: async (key, at, cost) => see(key, await budget.store.take(key, at, cost)),
    settle: async (key, at, delta) => see(key, await budget.store.settle(key, at, delta)),
  };
  let warned = 0;
  /** A store that fails lets the request through rather than failing it (the fallback store already answers in process). */
  const unavailable = (error: unknown) => {
    if (now() - warned > 10_000) {
      warned = now();
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, "rate limit store unavailable: not limiting");
    }
    return undefined;
  };

  const admit =
    budget && store
      ? async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
          const charge: Charge = { key: clientAddress(req, budget.trustProxyHops), paid: 0, decision: undefined };
          byRequest.set(req, charge);
          const decision = await store.take(charge.key, now(), REQUEST_POINTS).catch(unavailable);
          if (!decision) return true;
          charge.decision = decision;
          for (const [name, value] of rateLimitHeaders(budget.policy, decision)) res.setHeader(name, value);
          if (decision.allowed) {
            charge.paid = REQUEST_POINTS;
            return true;
          }
          sendJson(res, 429, { errors: [refusal(budget.policy, REQUEST_POINTS, decision)] }, { "retry-after": String(decision.retryAfterSeconds) });
          return false;
        }
      : undefined;
  /** What a new document of `tokens` costs `key` now: nothing within its free tokens of the minute, else newDocumentPoints. */
  const newDocumentPrice = async (key: string, tokens: number): Promise<number> => {
    if (!budget?.newDocuments) return 0;
    const free = await Promise.resolve(budget.newDocuments.take(key, NEW_DOCUMENT_BASE_TOKENS + tokens)).catch(() => true);
    return free ? 0 : newDocumentPoints(tokens);
  };
  // Charged whole, as a refused request on the way through Apollo Server still pays its new document
  // (the text was parsed): one settlement, and the request is refused when it left the budget in
  // debt. Its Retry-After is when the door admits the retry, a text the gateway now remembers.
  const chargeNewDocument =
    budget?.newDocuments && store
      ? async (req: IncomingMessage, tokens: number): Promise<NewDocumentCharge | undefined> => {
          const charge = byRequest.get(req);
          if (!charge?.decision) return undefined;
          const price = await newDocumentPrice(charge.key, tokens);
          if (price === 0) return undefined;
          const settled = await store.settle(charge.key, now(), price).catch(unavailable);
          if (!settled) return undefined;
          charge.paid += price;
          if (settled.points >= 0) return { headers: rateLimitHeaders(budget.policy, settled) };
          const decision = decide(budget.policy, settled.points, false, REQUEST_POINTS);
          const body = JSON.stringify({ errors: [refusal(budget.policy, charge.paid, decision)] });
          const headers: [string, string][] = [
            ["content-type", "application/json; charset=utf-8"],
            ["retry-after", String(decision.retryAfterSeconds)],
            ...rateLimitHeaders(budget.policy, decision),
          ];
          return { refusal: { status: 429, headers, body } };
        }
      : undefined;
  const admitRoute =
    budget && store
      ? async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
          const decision = await store.take(clientAddress(req, budget.trustProxyHops), now(), ROUTE_POINTS).catch(unavailable);
          if (!decision) return true;
          for (const [name, value] of rateLimitHeaders(budget.policy, decision)) res.setHeader(name, value);
          if (decision.allowed) return true;
          sendJson(res, 429, { errors: [refusal(budget.policy, ROUTE_POINTS, decision)] }, { "retry-after": String(decision.retryAfterSeconds) });
          return false;
        }
      : undefined;

  // No round trip: another replica (or a realtime node's replays) may have charged the budget since,
  // so this may read higher than the store would; it never invents a budget this process has not seen.
  const knownHeaders = budget
    ? (req: IncomingMessage) => {
        const last = seen.get(clientAddress(req, budget.trustProxyHops));
        if (!last) return undefined;
        const refilled = Math.min(budget.policy.capacity, last.points + (Math.max(0, now() - last.at) / 1000) * budget.policy.refillPerSecond);
        return rateLimitHeaders(budget.policy, decide(budget.policy, refilled, true));
      }
    : undefined;

  const plugin: ApolloServerPlugin = {
    async requestDidStart({ contextValue }) {
      const charge = (contextValue as { [CHARGE]?: Charge })[CHARGE];
      let requested: number | undefined;
      let refused = false;
      // What validating the document cost, when this request validated it (a document Apollo Server
      // has validated before is not validated again): gateway/validation-work.ts.
      let validated: DocumentNode | undefined;
      let invalid = false;
      // A valid new document past its client's free tokens (refused ones pay their tokens in validationPoints).
      let newDocument = 0;
      // A document refused at parse for its size was lexed up to the bound first.
      let oversized = false;
      // A long text that does not parse was read up to its error first (gateway/validation-work.ts syntaxErrorPoints).
      let syntaxError = 0;
      const validation = () =>
        (validated ? validationPoints(validated, invalid) + newDocument : 0) + (oversized ? MAX_DOCUMENT_TOKENS * POINTS_PER_PARSED_TOKEN : syntaxError);
      const settle = (context: GraphQLRequestContextWillSendResponse<BaseContext>, actual: number) => {
        if (!budget || !store || !charge?.decision) return;
        const delta = actual - charge.paid;
        if (delta !== 0) void store.settle(charge.key, now(), delta).catch(unavailable);
        // The headers say the budget after the settlement, as far as this request knows it.
        // A refused request still pays its validation (a new document's price): its headers count it, down to the store's floor of -capacity.
        const settled =
          refused && delta === 0
            ? charge.decision
            : decide(budget.policy, Math.max(-budget.policy.capacity, (refused ? charge.decision.points : charge.decision.remaining) - delta), true);
        for (const [name, value] of rateLimitHeaders(budget.policy, settled)) context.response.http.headers.set(name, value);
      };
      return {
        async parsingDidStart({ source }) {
          return async (error) => {
            if (!(error instanceof Error)) return;
            oversized = OVERSIZED.test(error.message);
            if (!oversized) syntaxError = syntaxErrorPoints(source);
          };
        },
        async validationDidStart({ document }) {
          validated = document;
          return async (errors) => {
            invalid = (errors?.length ?? 0) > 0;
            if (invalid || !charge?.decision) return;
            newDocument = await newDocumentPrice(charge.key, tokensOf(document));
          };
        },
        async responseForOperation({ request }) {
          requested = Math.max(REQUEST_POINTS, measuredOperation(request)?.cost ?? 0) + validation();
          if (!budget || !store || !charge?.decision) return null;
          const rest = requested - charge.paid;
          if (rest <= 0) return null;
          const decision = await store.take(charge.key, now(), rest).catch(unavailable);
          if (!decision) return null;
          charge.decision = decision;
          if (decision.allowed) {
            charge.paid += rest;
            return null;
          }
          refused = true;
          const headers = new HeaderMap([["retry-after", String(decision.retryAfterSeconds)]]);
          return { http: { status: 429, headers }, body: { kind: "single", singleResult: { errors: [refusal(budget.policy, requested, decision)] } } };
        },
        async willSendResponse(context) {
          const { response, document, operation, schema, request } = context;
          let actual: number;
          if (requested === undefined || refused)
            actual = REQUEST_POINTS + validation(); // never ran: the door's fee, and validation's work if it was done
          else if (response.body.kind === "single" && response.body.singleResult.data === undefined)
            // No `data` at all: refused before execution (its variables did not coerce); execution, even failed, says data.
            actual = REQUEST_POINTS + validation();
          else if (response.body.kind === "single" && response.body.singleResult.data && document && operation)
            actual =
              Math.max(REQUEST_POINTS, actualCost(schema, document, operation, request.variables ?? {}, costViewOf(response.body.singleResult.data))) +
              validation();
          else actual = requested; // ran, but the answer does not say how far: as requested
          settle(context, actual);
          if (response.body.kind !== "single") return;
          const cost: CostExtension = { requested: requested ?? actual, actual };
          const result = response.body.singleResult;
          result.extensions = { ...result.extensions, cost };
        },
      };
    },
  };

  return {
    plugin,
    admit,
    admitRoute,
    knownHeaders,
    chargeNewDocument,
    ...(budget && store ? { settings: { ...budget, store } } : {}),
    context(req) {
      // A symbol property: Apollo Server clones the context per operation (own properties survive).
      return { [CHARGE]: byRequest.get(req) };
    },
  };
}
