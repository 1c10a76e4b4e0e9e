import { loadConfig } from "../../core/config.ts";
import { createLogger } from "../../core/logger.ts";
import { runSubgraphMain } from "../../core/service.ts";
import { createNetworksSubgraph } from "./server.ts";

const config = loadConfig();
await runSubgraphMain(createNetworksSubgraph, config, createLogger({ name: "networks", level: config.LOG_LEVEL }));
