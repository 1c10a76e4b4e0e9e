// How `node` runs this repository's TypeScript, loaded with `--import` before an entry point: by
// Node itself where it strips types (Node ≥ 22.18 and the image's 24), else through tsx's loader
// (Node 20). Node's own stripping runs each module as written, with no loader hook on the serving
// path (tsx's hooks sat on every runtime require, e.g. Apollo Server's per-request hash: about 5 %
// of `npm start`'s CPU per answer, BENCHMARKS.md).
// The code keeps to syntax Node can strip (tsconfig `erasableSyntaxOnly`).
if (!process.features.typescript) await import("tsx");
