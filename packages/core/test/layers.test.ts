/**
 * Core's floors, checked on its import graph (every `import` and `export ... from` of src/, type-only ones
 * included): a file imports only files on its own floor or below, and the graph has no cycle.
 *
 *   ground    words and values everything shares: errors, ids, json, names, logger, clock, types, ...
 *   contract  src/contract/: the Backend interface, facet by facet (types only)
 *   services  the rules core runs over a backend: guard, queries, options, jobs, dead letters, queues,
 *             schedules' planning and service, ... (a new file at src/ lands here unless listed below)
 *   runners   the loops: src/worker/, the scheduler and its worker hook
 *   app       soniq.ts, the `Soniq` class that assembles everything
 *   entries   what package.json exports (index.ts, backend-entry.ts, ...); nothing in src imports them
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const FLOORS = ["ground", "contract", "services", "runners", "app", "entries"] as const;
type Floor = (typeof FLOORS)[number];

const GROUND = [
  "clock.ts",
  "context.ts",
  "errors.ts",
  "flow-types.ts",
  "ids.ts",
  "json.ts",
  "log-line.ts",
  "logger.ts",
  "metrics.ts",
  "middleware.ts",
  "names.ts",
  "outcomes.ts",
  "progress.ts",
  "retry-policy.ts",
  "schema/constants.ts",
  "tracing.ts",
  "typed-emitter.ts",
  "types.ts",
  "version.ts",
  "webhook-types.ts",
];
const RUNNERS = ["schedules/scheduler.ts", "schedules/worker.ts"];
const ENTRIES = ["index.ts", "backend-entry.ts", "prometheus.ts", "schema/pg.ts", "schema/sqlite.ts"];

function floorOf(file: string): Floor {
  if (ENTRIES.includes(file)) return "entries";
  if (file === "soniq.ts") return "app";
  if (file.startsWith("worker/") || RUNNERS.includes(file)) return "runners";
  if (file.startsWith("contract/")) return "contract";
  if (GROUND.includes(file)) return "ground";
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
    expect(graph.get("soniq.ts")).toContain("contract/index.ts");
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
    broken.set("queues.ts", [...(graph.get("queues.ts") ?? []), "index.ts"]);
    expect(upwardArrows(broken)).toEqual([
      "contract/runs.ts (contract) -> worker/claim.ts (runners)",
      "queues.ts (services) -> index.ts (entries)",
    ]);
    // worker/claim.ts imports contract/index.ts, which re-exports contract/runs.ts: a cycle.
    expect(findCycle(broken)).toEqual(expect.arrayContaining(["contract/runs.ts", "worker/claim.ts"]));
  });
});
