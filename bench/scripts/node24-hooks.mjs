// Loaded with `--import` by every bench child on Node 24 (src/node24.ts): `better-sqlite3`, imported or
// required from anywhere (Soniq's SQLite backend, liteque, knex), resolves to version 13 installed beside
// Node 24 (BENCH_SQLITE13), because the lockfile's 12 aborts on Node 24 (see .ci/node).
import { registerHooks } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = process.env.BENCH_SQLITE13;
if (!dir) throw new Error("node24-hooks: BENCH_SQLITE13 is not set");
// A file beside the package's node_modules, so resolving from it finds version 13.
const parentURL = pathToFileURL(join(dir, "..", "..", "resolve-from.js")).href;

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === "better-sqlite3") return nextResolve(specifier, { ...context, parentURL });
    return nextResolve(specifier, context);
  },
});
