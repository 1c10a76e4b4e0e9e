// GraphiQL at `GET /graphql` for browsers: GraphiQL 4 (CodeMirror 5 editors, no web workers) with
// React, bundled by web/build.ts into same-origin files. Queries go to this origin's /graphql as
// JSON POSTs; the schema comes from introspection, which answers in every mode.
import "./graphiql.css";
import "graphiql/style.css";
import { GraphiQL, type GraphiQLProps } from "graphiql";
import { Kind, parse } from "graphql";
import { createElement } from "react";
import { createRoot } from "react-dom/client";

const ENDPOINT = "/graphql";

const DEFAULT_QUERY = `# The Public Bet Results API. Ctrl-Enter runs the query; Ctrl-Space completes.
# The docs (book icon, top left) list every type, field and argument.
query Networks {
  networkConfigs {
    chainId
    name
    confirmations
    indexing {
      indexedBlock
      headBlock
      isReady
    }
  }
}
`;

/**
 * The operation to run. GraphiQL learns the editor's operation names after a pause, so a query run
 * right after an edit can come with the name of the operation it replaced: with one operation in
 * the document, that one is meant. A document that does not parse goes as it is (the server says why).
 */
export function operationNameFor(query: string, requested: string | null | undefined): string | null | undefined {
  let names: (string | undefined)[];
  try {
    names = parse(query).definitions.flatMap((definition) => (definition.kind === Kind.OPERATION_DEFINITION ? [definition.name?.value] : []));
  } catch {
    return requested;
  }
  if (requested && names.includes(requested)) return requested;
  return names.length === 1 ? (names[0] ?? null) : requested;
}

/** POSTs the operation to this origin, with the headers typed in GraphiQL's header editor. */
const fetcher: GraphiQLProps["fetcher"] = async (params, options) => {
  const response = await fetch(ENDPOINT, {
    method: "POST",
    headers: { ...options?.headers, "content-type": "application/json", accept: "application/graphql-response+json, application/json" },
    body: JSON.stringify({ ...params, operationName: operationNameFor(params.query, params.operationName) }),
  });
  return response.json();
};

const container = document.getElementById("graphiql");
if (!container) throw new Error("#graphiql is missing from the page");
container.textContent = "";
createRoot(container).render(createElement(GraphiQL, { fetcher, defaultQuery: DEFAULT_QUERY }));
