/**
 * Core's floors, checked on its import graph (every `import` and `export ... from` of src/, type-only ones
 * included): a file imports only files on its own floor or below, and the graph has no cycle.
 *
 *   ground    common/ (errors, ids, json, names, logger, clock, the row types) and the few feature files a
 *             contract or a plugin names (flows/types, webhooks/types, jobs/context, jobs/outcomes, ...)
 *   contract  contract/: the Backend interface, facet by facet (types only)
 *   services  the feature folders (jobs/, dead-letters/, flows/, queues/, schedules/, webhooks/,
 *             observability/, ops/, app/'s guard and options): the rules core runs over a backend
 *   runners   the loops: worker/ (but for its options, liveness rule and list), the scheduler and its worker hook
 *   app       app/soniq.ts, the `Soniq` class that assembles everything
 *   entries   what package.json exports (index.ts, plugin.ts, ops.ts, backend.ts, ...); nothing in src imports them
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const FLOORS = ["ground", "contract", "services", "runners", "app", "entries"] as const;
type Floor = (typeof FLOORS)[number];

/** Ground: the words everything shares (common/), and each feature's own types and values a contract names. */
const GROUND_FILES = [
  "flows/types.ts",
  "jobs/context.ts",
  "jobs/outcomes.ts",
  "jobs/progress.ts",
  "jobs/retry-policy.ts",
  "observability/sink.ts",
  "observability/tracing.ts",
  "app/plugins.ts",
  "schema/constants.ts",
  "steps/types.ts",
  "webhooks/types.ts",
];
/** The loops: the worker and the scheduler. The worker folder's services (options, liveness, the list) are below. */
const RUNNER_FILES = ["schedules/scheduler.ts", "schedules/worker.ts"];
const WORKER_SERVICES = ["worker/options.ts", "worker/liveness.ts", "worker/service.ts"];
const ENTRIES = ["index.ts", "plugin.ts", "ops.ts", "backend.ts", "schema/pg.ts", "schema/sqlite.ts"];

function floorOf(file: string): Floor {
  if (ENTRIES.includes(file)) return "entries";
  if (file === "app/soniq.ts") return "app";
  if (RUNNER_FILES.includes(file)) return "runners";
  if (file.startsWith("worker/") && !WORKER_SERVICES.includes(file)) return "runners";
  if (file.startsWith("contract/")) return "contract";
  if (file.startsWith("common/") || GROUND_FILES.includes(file)) return "ground";
  return "services";
}

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(SRC, path).split("\\").join("/")] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/g;

/** file -> the files of src/ it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles()) {
    const text = readFileSync(join(SRC, file), "utf8");
    const targets = [...text.matchAll(IMPORT)].map((m) =>
      normalize(join(dirname(file), (m[1] as string).replace(/\.js$/, ".ts")))
        .split("\\")
        .join("/"),
    );
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every import from a file to one on a higher floor (or to an entry), as "from (floor) -> to (floor)". */
function upwardArrows(graph: Map<string, string[]>): string[] {
  const rank = (file: string) => FLOORS.indexOf(floorOf(file));
  return [...graph].flatMap(([file, targets]) =>
    targets
      .filter((t) => rank(t) > rank(file) || floorOf(t) === "entries")
      .map((t) => `${file} (${floorOf(file)}) -> ${t} (${floorOf(t)})`),
  );
}

function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string): string[] | null => {
    if (state.get(file) === "done") return null;
    if (state.get(file) === "open") return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, "open");
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      const cycle = visit(target);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(file, "done");
    return null;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return null;
}

describe("core/layers", () => {
  const graph = importGraph();

  it("core/layers-parsed: the graph reads every file and resolves every import to a file of src/", () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get("app/soniq.ts")).toContain("contract/index.ts");
    const unresolved = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => !graph.has(t)).map((t) => `${file} -> ${t}`),
    );
    expect(unresolved, "imports that name no file of src/").toEqual([]);
  });

  it("core/layers-no-arrow-up: no file imports a file on a higher floor", () => {
    expect(upwardArrows(graph), "imports running back up (move the shared part down a floor)").toEqual([]);
  });

  it("core/layers-no-cycle: the import graph has no cycle", () => {
    expect(findCycle(graph), "an import cycle").toBeNull();
  });

  it("core/layers-check-catches: the checks find an arrow up, an import of an entry, and a cycle", () => {
    const broken = new Map(graph);
    broken.set("contract/runs.ts", [...(graph.get("contract/runs.ts") ?? []), "worker/claim.ts"]);
    broken.set("queues/service.ts", [...(graph.get("queues/service.ts") ?? []), "index.ts"]);
    expect(upwardArrows(broken)).toEqual([
      "contract/runs.ts (contract) -> worker/claim.ts (runners)",
      "queues/service.ts (services) -> index.ts (entries)",
    ]);
    // worker/claim.ts imports contract/index.ts, which re-exports contract/runs.ts: a cycle.
    expect(findCycle(broken)).toEqual(expect.arrayContaining(["contract/runs.ts", "worker/claim.ts"]));
  });
});
