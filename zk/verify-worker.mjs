// Entry of the zk/verify-pool.ts workers: Node does not load TypeScript in a worker thread by
// itself (nor through --import in its execArgv on Node 20), so this plain module registers tsx's
// hooks in the worker first, then loads the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./verify-worker.ts");
