import { realtimeSuite } from "./suite.ts";

realtimeSuite("memory");
