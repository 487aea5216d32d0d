/**
 * The benchmark's published results as a page of the documentation site. A published result is the JSON a
 * `pnpm bench --json FILE` run wrote (main.ts), committed under bench/published/; the page is generated from
 * those files when the site is built (`pnpm docs:build`: docs/scripts/api.mjs runs results-page-main.ts), newest
 * first, with the same tables the run printed. The data is the record; the page is never edited by hand.
 */

import type { Sample } from "./plan.js";
import {
  type Ratio,
  renderRatios,
  renderSelfRatios,
  renderTable,
  type SelfRatioValue,
  type Summary,
} from "./report.js";

/** What main.ts writes with --json. */
export interface BenchDoc {
  finishedAt: string;
  elapsedSeconds: number;
  options: { quick: boolean; runs: number; workloads: string[]; sizes?: unknown };
  machine: Record<string, string | number>;
  postgresSettings?: Record<string, string>;
  systems: { id: string; label: string; storage: string; notes: string }[];
  unavailable: Record<string, string>;
  summary: Summary;
  ratios: Ratio[];
  selfRatios: SelfRatioValue[];
  invalid: Record<string, string[]>;
  samples: Sample[];
}

export interface Published {
  /** The file's name under bench/published/, which says what the run was. */
  file: string;
  doc: BenchDoc;
  /** The command that produced it, from the file's sibling `<name>.md` note, if any. */
  note?: string;
}

/** Checks the shape main.ts writes; a file that is not one is refused with its name, never rendered half. */
export function parseBenchDoc(file: string, text: string): BenchDoc {
  const doc = JSON.parse(text) as Partial<BenchDoc>;
  for (const key of [
    "finishedAt",
    "options",
    "machine",
    "systems",
    "summary",
    "ratios",
    "samples",
  ] as const) {
    if (doc[key] === undefined) throw new Error(`${file} is not a bench result: it has no "${key}"`);
  }
  return { unavailable: {}, selfRatios: [], invalid: {}, ...doc } as BenchDoc;
}

const runOf = (doc: BenchDoc) =>
  `${doc.options.quick ? "quick" : "full"} run, ${doc.options.runs} run(s) per cell (medians), ` +
  `${Math.round(doc.elapsedSeconds)} s; workloads ${doc.options.workloads.join(", ")}`;

const machineOf = (doc: BenchDoc) => {
  const m = doc.machine;
  const parts = [
    m.nproc !== undefined ? `${m.nproc} cores` : null,
    m.memoryGiB !== undefined ? `${m.memoryGiB} GiB` : null,
    m.cpu !== undefined ? String(m.cpu) : null,
    m.node !== undefined ? `Node ${String(m.node).replace(/^v/, "")}` : null,
    m.postgres !== undefined ? `PostgreSQL ${m.postgres}` : null,
  ];
  return parts.filter((p) => p !== null).join(", ");
};

/** One published run: when, where, how, then the run's tables, its ratios and its rows' notes. */
export function renderRun(published: Published): string {
  const { doc, file } = published;
  const ran = doc.systems.filter((s) => doc.samples.some((x) => x.system === s.id));
  const out = [
    `## ${doc.finishedAt.slice(0, 10)}: \`${file}\``,
    "",
    `${runOf(doc)}. Machine: ${machineOf(doc)}.`,
  ];
  if (published.note) out.push("", published.note.trim());
  out.push("", renderTable(ran, doc.samples, doc.summary), "", "### Ratios", "", renderRatios(doc.ratios));
  const own = renderSelfRatios(ran, doc.selfRatios);
  if (own) out.push("", "### Against its own row", "", own);
  out.push("", "### The rows", "");
  for (const s of ran) out.push(`- ${s.label}: ${s.notes}`);
  for (const [id, why] of Object.entries(doc.unavailable)) out.push(`- ${id}: not run (${why})`);
  for (const [id, reasons] of Object.entries(doc.invalid))
    out.push(`- **INVALID** ${id}: ${reasons.join("; ")}`);
  return out.join("\n");
}

/** The page: every published run, newest first. */
export function renderResultsPage(runs: readonly Published[]): string {
  const sorted = [...runs].sort((a, b) => b.doc.finishedAt.localeCompare(a.doc.finishedAt));
  const head = [
    "# Published results",
    "",
    "<!-- Generated from bench/published/*.json by bench/src/results-page-main.ts when the site is built. Do not edit. -->",
    "",
    "Each section is one `pnpm bench` run, rendered from the JSON it wrote (committed under `bench/published/`,",
    "with every sample), newest first. A ratio above 1 means Soniq is better. How the figures are measured is on",
    "the [method](./method) page; the history of the figures, with the reasons behind each change, on the",
    "[results](./results) and [optimisation log](./optimisation-log) pages.",
  ];
  if (sorted.length === 0) return [...head, "", "No run is published yet."].join("\n");
  return [...head, "", ...sorted.map(renderRun).join("\n\n").split("\n"), ""].join("\n");
}
