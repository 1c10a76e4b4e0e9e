// Needs a Redis server: TEST_REDIS_URL, default redis://127.0.0.1:6379 (channels get a random prefix).
import { realtimeSuite } from "../test/realtime-suite.ts";

realtimeSuite("redis");
