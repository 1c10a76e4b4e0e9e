// A test page for the client's useInfiniteBets: a wallet's history with a status filter, one row
// per bet, and a "load more" button. client/infinite-bets.pg.test.ts bundles it (esbuild), serves
// it at the gateway's origin and clicks through it in Chromium. The query comes from the URL:
// ?wallet=0x…&status=SETTLED&first=7.
import { createElement as h } from "react";
import { createRoot } from "react-dom/client";
import { createGraphQLClient } from "../../client/graphql.ts";
import { playerBetsPages } from "../../client/pages.ts";
import { useInfiniteBets } from "../../client/react.ts";

const params = new URLSearchParams(location.search);
const wallet = params.get("wallet") ?? "";
const status = params.get("status") ?? "SETTLED";
const first = Number(params.get("first") ?? "10");
const client = createGraphQLClient({ url: "/graphql" });

function History() {
  const history = useInfiniteBets(client, playerBetsPages({ wallet, filter: { status: [status as "SETTLED"] }, first }));
  const state = history.error ? "error" : history.loading ? "loading" : history.hasMore ? "more" : "done";
  return h(
    "main",
    { style: { fontFamily: "system-ui, sans-serif", padding: "12px" } },
    h("h1", { style: { fontSize: "18px" } }, `Wallet ${wallet} — ${status} bets`),
    h(
      "p",
      { id: "status", "data-state": state, "data-count": history.items.length, "data-total": history.totalCount ?? "" },
      `${history.items.length} of ${history.totalCount ?? "?"} loaded${history.error ? ` — ${history.error.message}` : ""}`,
    ),
    h(
      "table",
      { style: { borderCollapse: "collapse", fontSize: "12px" } },
      h("thead", null, h("tr", null, ...["#", "chain", "bet", "status", "game", "stake (units)"].map((label) => h("th", { key: label, style: cell }, label)))),
      h(
        "tbody",
        { id: "bets" },
        history.items.map((bet, index) =>
          h(
            "tr",
            { key: `${bet.chainId}:${bet.betId}`, "data-key": `${bet.chainId}:${bet.betId}`, "data-status": bet.status, "data-player": bet.player },
            h("td", { style: cell }, index + 1),
            h("td", { style: cell }, bet.chainId),
            h("td", { style: cell }, bet.betId),
            h("td", { style: cell }, bet.status),
            h("td", { style: cell }, bet.game),
            h("td", { style: cell }, bet.stake),
          ),
        ),
      ),
    ),
    h(
      "button",
      { id: "load-more", type: "button", disabled: !history.hasMore || history.loading, onClick: () => void history.loadMore() },
      history.hasMore ? "Load more" : "All loaded",
    ),
  );
}

const cell = { border: "1px solid #ccc", padding: "2px 8px" };
const container = document.getElementById("root");
if (container) createRoot(container).render(h(History));
