import { loadConfig } from "../../core/config.ts";
import { createLogger } from "../../core/logger.ts";
import { runSubgraphMain } from "../../core/service.ts";
import { createHistorySubgraph } from "./server.ts";

const config = loadConfig();
await runSubgraphMain(createHistorySubgraph, config, createLogger({ name: "history", level: config.LOG_LEVEL }));
