import { operationFromDocument, Supergraph } from "@apollo/federation-internals";
import { prettyFormatQueryPlan, QueryPlanner } from "@apollo/query-planner";
import {
  findBreakingChanges,
  Kind,
  parse,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
  type ArgumentNode,
  type ASTNode,
  type BreakingChange,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type TypeNode,
  type VariableDefinitionNode,
} from "graphql";
import { pricedApiSchemaOf } from "../gateway/cost-directives.ts";
import { DEFAULT_QUERY_LIMITS, measureOperation } from "../gateway/limits.ts";
import { undescribedElements } from "./schema-descriptions.ts";
import { listSizeFindings } from "./schema-list-sizes.ts";

// What one subgraph's SDL change does to the supergraph in service (docs/guides/adding-a-field.md):
// composed with every other subgraph's current SDL, checked (descriptions, list sizes, breaking
// changes against the current supergraph) and, for each recorded operation, whether its query
// plan, its validity or its price changes. The command is scripts/schema-impact.ts.

/** A recorded operation: a name and a document holding that operation (and the fragments it spreads). */
export interface RecordedOperation {
  name: string;
  document: DocumentNode;
}

export interface OperationImpact {
  name: string;
  /** unchanged; plan: another query plan; invalid: no longer valid against the new schema. */
  verdict: "unchanged" | "plan" | "invalid";
  costBefore: number;
  costAfter?: number;
  /** The new plan (verdict "plan") or the validation errors (verdict "invalid"). */
  detail?: string;
}

/**
 * Operations of a file: an Apollo persisted-query manifest (`{ operations: [{ id, name, body }] }`),
 * a JSON object of id to document, or GraphQL text (each operation of it, with every fragment).
 */
export function recordedOperations(text: string, source: string): RecordedOperation[] {
  const documents: [string, string][] = [];
  if (source.endsWith(".json")) {
    const parsed = JSON.parse(text) as { operations?: { id?: string; name?: string; body: string }[] } | Record<string, string>;
    if (Array.isArray(parsed.operations)) documents.push(...parsed.operations.map((o, i): [string, string] => [o.name ?? o.id ?? `#${i + 1}`, o.body]));
    else documents.push(...Object.entries(parsed as Record<string, string>));
  } else if (source.endsWith(".ts")) {
    // The client package's operations: the text of each graphql(`...`) call, one document.
    documents.push(["", [...text.matchAll(/graphql\(`([^`]*)`\)/g)].map((match) => match[1]).join("\n")]);
  } else documents.push(["", text]);
  return documents.flatMap(([name, body]) => {
    const document = parse(body);
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    return document.definitions
      .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
      .map((operation) => ({
        name: operation.name?.value ?? name,
        document: { ...document, definitions: [operation, ...spreadFragments(operation, fragments)] },
      }));
  });
}

/**
 * A recorded operation as the gateway stores it (gateway/schema-usage.ts: literals stripped, so
 * `wallet: ""` or `first: 0`, which may not validate) made plannable again: every literal argument
 * becomes a variable of the argument's type in `schema`, left unset, so validation, planning and
 * pricing see what any value of it would get (a slicing argument prices at its default or assumed size).
 * An argument `schema` does not know keeps its literal (validation then says why).
 */
export function withVariablesForLiterals(schema: GraphQLSchema, operation: RecordedOperation): RecordedOperation {
  const typeInfo = new TypeInfo(schema);
  const taken = new Set<string>();
  visit(operation.document, {
    enter(node) {
      if (node.kind === Kind.VARIABLE) taken.add(node.name.value);
    },
  });
  const added: VariableDefinitionNode[] = [];
  const replaced = visit(
    operation.document,
    visitWithTypeInfo(typeInfo, {
      Argument(node): ArgumentNode | undefined {
        const type = typeInfo.getArgument()?.type;
        if (node.value.kind === Kind.VARIABLE || !type) return undefined;
        let name = `literal${added.length + 1}`;
        while (taken.has(name)) name = `_${name}`;
        taken.add(name);
        const variable = { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: name } } as const;
        added.push({ kind: Kind.VARIABLE_DEFINITION, variable, type: parseTypeReference(String(type)) });
        return { ...node, value: variable };
      },
    }),
  );
  if (added.length === 0) return operation;
  const definitions = replaced.definitions.map((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION ? { ...definition, variableDefinitions: [...(definition.variableDefinitions ?? []), ...added] } : definition,
  );
  return { name: operation.name, document: { ...replaced, definitions } };
}

/** A type reference (`[Int!]!`) as an AST node. */
function parseTypeReference(reference: string): TypeNode {
  const operation = parse(`query ($v: ${reference}) { __typename }`).definitions[0] as OperationDefinitionNode;
  return operation.variableDefinitions![0]!.type;
}

/** The fragments an operation spreads, directly or through other fragments, each once. */
function spreadFragments(operation: OperationDefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const found = new Map<string, FragmentDefinitionNode>();
  const pending: ASTNode[] = [operation];
  for (let node = pending.pop(); node; node = pending.pop()) {
    visit(node, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (!fragment || found.has(spread.name.value)) return;
        found.set(spread.name.value, fragment);
        pending.push(fragment);
      },
    });
  }
  return [...found.values()];
}

/** The query plan of an operation, printed; undefined when the operation is not valid against the supergraph's API schema. */
function planner(supergraphSdl: string) {
  const supergraph = Supergraph.build(supergraphSdl);
  const apiSchema = supergraph.apiSchema();
  const queryPlanner = new QueryPlanner(supergraph);
  const api = pricedApiSchemaOf(supergraphSdl);
  return {
    api,
    plan(document: DocumentNode): string {
      return prettyFormatQueryPlan(queryPlanner.buildQueryPlan(operationFromDocument(apiSchema, document)));
    },
    cost(document: DocumentNode): number {
      const operation = document.definitions[0] as OperationDefinitionNode;
      // Priced without a limit: the change's effect on the price, whatever it is.
      return measureOperation(api, document, operation, {}, { ...DEFAULT_QUERY_LIMITS, maxCost: Number.POSITIVE_INFINITY }).cost;
    },
  };
}

/** Each operation's fate when the supergraph `before` becomes `after`. */
export function operationImpacts(before: string, after: string, operations: readonly RecordedOperation[]): OperationImpact[] {
  const old = planner(before);
  const next = planner(after);
  return operations.map(({ name, document }) => {
    const costBefore = old.cost(document);
    const errors = validate(next.api, document);
    if (errors.length > 0) return { name, verdict: "invalid", costBefore, detail: errors.map((e) => e.message).join("; ") };
    const plan = next.plan(document);
    const costAfter = next.cost(document);
    return plan === old.plan(document) ? { name, verdict: "unchanged", costBefore, costAfter } : { name, verdict: "plan", costBefore, costAfter, detail: plan };
  });
}

/** The breaking changes of the API schema clients see, from `before` to `after`. */
export function breakingChanges(before: string, after: string): BreakingChange[] {
  return findBreakingChanges(pricedApiSchemaOf(before), pricedApiSchemaOf(after));
}

/**
 * The checks of schema:check that concern the change itself: descriptions, list sizes and, unless
 * recorded usage decides them instead (`usageDecidesBreaks`), breaking changes against `before`.
 */
export function changeFindings(before: string, after: string, options: { usageDecidesBreaks?: boolean } = {}): string[] {
  const api = pricedApiSchemaOf(after);
  return [
    ...undescribedElements(api).map((element) => `undescribed: ${element} has no description in its subgraph's SDL`),
    ...listSizeFindings(after),
    ...(options.usageDecidesBreaks ? [] : breakingChanges(before, after).map((change) => `breaking change: ${change.type}: ${change.description}`)),
  ];
}
