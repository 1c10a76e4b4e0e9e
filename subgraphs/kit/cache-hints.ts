import type { ApolloServerPlugin, BaseContext } from "@apollo/server";
import {
  defaultFieldResolver,
  getNamedType,
  GraphQLObjectType,
  isCompositeType,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo,
  type GraphQLSchema,
} from "graphql";
import { MAX_AGE } from "../../core/max-age.ts";
import { betDepth, type NetworkDirectory, type NetworkEntry } from "../../core/networks.ts";

// Cache-Control for CDNs: subgraphs hint each field (a tier of core/max-age.ts), the gateway sends
// the minimum. The rule is Apollo's cache-control plugin's (a hint replaces the field's default; a
// root or object-typed field without a hint counts as `defaultMaxAge`; a leaf without one does not
// count), but kept without its per-field plugin hook: that hook made Apollo Server dispatch to the
// plugins on every field of every response, leaves included (about 1 500 calls for 100 proofs).
// Only the fields that can matter are wrapped, once, when the schema is built; the minimum lives on
// the request's context and becomes the header once per response (BENCHMARKS.md, issue 12).

// A wrapped field's hint lives on its own resolve info (graphql-js and the compiled executor make
// one per field call): NO_HINT until the resolver hints, no other object per call.
const SLOT = Symbol("cache hint of this field");
const POLICY = Symbol("cache policy of this response");
const NO_HINT = -1;

type HintedInfo = GraphQLResolveInfo & { [SLOT]?: number };
interface Policy {
  maxAge: number | undefined;
}

/**
 * Hints the field being resolved. Several hints of one field keep the shortest: `_entities` hints
 * once per reference on one resolve info, and the last reference must not outlast a live one.
 */
export function cacheFor(info: GraphQLResolveInfo, maxAge: number): void {
  const hinted = info as HintedInfo;
  const current = hinted[SLOT];
  if (current !== undefined) hinted[SLOT] = current === NO_HINT ? maxAge : Math.min(current, maxAge);
}

/** `final` once a settled or refunded bet's change is finalized on its network; a pending bet is always `live`. */
export async function betMaxAge(networks: NetworkDirectory, bet: { chainId: number | bigint; lastChangeBlock: bigint; status: string }): Promise<number> {
  if (bet.status === "PENDING") return MAX_AGE.live;
  return betMaxAgeAt(await networks.get(bet.chainId), bet);
}

/** betMaxAge with the bet's network already in hand: no await per bet where a whole list shares one network. */
export function betMaxAgeAt(network: NetworkEntry | undefined, bet: { lastChangeBlock: bigint; status: string }): number {
  if (bet.status === "PENDING") return MAX_AGE.live;
  return betDepth(bet.lastChangeBlock, network).finalized ? MAX_AGE.final : MAX_AGE.live;
}

/** Gives a request's context its (empty) cache policy; the same object comes back. */
export function withCachePolicy<T extends object>(context: T): T {
  return Object.assign(context, { [POLICY]: { maxAge: undefined } satisfies Policy });
}

function isPromise(x: unknown): x is PromiseLike<unknown> {
  return typeof (x as PromiseLike<unknown> | null)?.then === "function";
}

/** Folds a finished field into the response's policy: its hint, else the default when the field counts. */
function settle(policy: Policy, info: HintedInfo, fallback: number | undefined): void {
  const hint = info[SLOT] ?? NO_HINT;
  const maxAge = hint === NO_HINT ? fallback : hint;
  if (maxAge !== undefined && (policy.maxAge === undefined || maxAge < policy.maxAge)) policy.maxAge = maxAge;
}

/** Settles once the field's value is (a promise, or a list holding promises, as `__resolveReference` batches give). */
function settleWhenFinished(result: unknown, policy: Policy, info: HintedInfo, fallback: number | undefined): void {
  if (isPromise(result)) {
    result.then(
      (value) => settleWhenFinished(value, policy, info, fallback),
      () => settle(policy, info, fallback),
    );
  } else if (Array.isArray(result) && result.some(isPromise)) {
    Promise.all(result).then(
      () => settle(policy, info, fallback),
      () => settle(policy, info, fallback),
    );
  } else settle(policy, info, fallback);
}

/**
 * Wraps, in place, every field that can add to a response's max-age: root fields and object-typed
 * fields (their default applies when they set no hint) and leaves with their own resolver (they may
 * hint). Leaves on the default resolver are left alone: they neither hint nor count.
 *
 * `finalFields` ("Type.field") are fields whose value never changes once it exists (a proof): their
 * hint would be MAX_AGE.final, the longest tier, which can never lower a response's minimum (a root
 * field always counts). They are left alone too, on the default resolver unless they have their
 * own: no wrapper, no hint, no resolver call per value (100 proofs a `betResults` answer).
 */
export function instrumentCacheHints(schema: GraphQLSchema, defaultMaxAge: number, finalFields: readonly string[] = []): GraphQLSchema {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean));
  const final = new Set(finalFields);
  for (const coordinate of final) {
    const [typeName, fieldName] = coordinate.split(".");
    const type = schema.getType(typeName ?? "");
    if (!(type instanceof GraphQLObjectType) || !fieldName || !type.getFields()[fieldName] || roots.has(type)) {
      throw new Error(`finalFields: ${coordinate} is not a field of an object type other than a root`);
    }
  }
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__") || !(type instanceof GraphQLObjectType)) continue;
    for (const field of Object.values(type.getFields())) {
      if (final.has(`${type.name}.${field.name}`)) continue;
      const counts = roots.has(type) || isCompositeType(getNamedType(field.type));
      const resolve = field.resolve;
      if (!counts && !resolve) continue;
      const inner: GraphQLFieldResolver<unknown, unknown> = resolve ?? defaultFieldResolver;
      const fallback = counts ? defaultMaxAge : undefined;
      field.resolve = (source, args, context: { [POLICY]?: Policy } | undefined, info) => {
        const policy = context?.[POLICY];
        if (!policy) return inner(source, args, context, info);
        const hinted = info as HintedInfo;
        hinted[SLOT] = NO_HINT;
        let result: unknown;
        try {
          result = inner(source, args, context, info);
        } catch (error) {
          settle(policy, hinted, fallback);
          throw error;
        }
        settleWhenFinished(result, policy, hinted, fallback);
        return result;
      };
    }
  }
  return schema;
}

/** Sets Cache-Control once per response from the context's policy, as Apollo's plugin would: `no-store` unless cacheable and error-free. */
export function cacheHeaderPlugin(): ApolloServerPlugin<BaseContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const maxAge = (contextValue as { [POLICY]?: Policy })[POLICY]?.maxAge;
          const cacheable = maxAge !== undefined && maxAge > 0 && response.body.kind === "single" && !response.body.singleResult.errors;
          response.http.headers.set("cache-control", cacheable ? `max-age=${maxAge}, public` : "no-store");
        },
      };
    },
  };
}
