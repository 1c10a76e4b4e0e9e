import { loadConfig } from "../../core/config.ts";
import { createLogger } from "../../core/logger.ts";
import { runSubgraphMain } from "../../core/service.ts";
import { createResultsSubgraph } from "./server.ts";

const config = loadConfig();
await runSubgraphMain(createResultsSubgraph, config, createLogger({ name: "results", level: config.LOG_LEVEL }));
