import { realtimeSuite } from "../test/realtime-suite.ts";

realtimeSuite("memory");
