/**
 * The published-results page: every committed run (bench/published/*.json) is rendered with its machine, a row
 * per system that ran, each ratio pair and each invalid row; a file that is not a bench result is refused by
 * name, not rendered half.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseBenchDoc, renderResultsPage } from "../src/results-page.js";
import { readPublished } from "../src/results-page-main.js";

const tmp = mkdtempSync(join(tmpdir(), "soniq-bench-published-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("bench/published-page", () => {
  const published = readPublished();

  it("at least one run is published, and each renders its machine, rows and ratios", () => {
    expect(published.length).toBeGreaterThan(0);
    const page = renderResultsPage(published);
    for (const { file, doc } of published) {
      expect(page).toContain(`\`${file}\``);
      expect(page).toContain(`${doc.machine.nproc} cores`);
      const ran = doc.systems.filter((s) => doc.samples.some((x) => x.system === s.id));
      expect(ran.length).toBeGreaterThan(0);
      for (const s of ran)
        expect(page).toMatch(new RegExp(`^\\| ${escapeRegExp(s.label)}( \\*\\*INVALID\\*\\*)? \\|`, "m"));
      for (const r of doc.ratios) expect(page).toContain(`| ${r.soniq} vs ${r.peer} |`);
      for (const id of Object.keys(doc.invalid)) expect(page).toContain(`**INVALID** ${id}`);
    }
  });

  it("runs are listed newest first", () => {
    const [a] = published;
    if (!a) throw new Error("no published run");
    const older = { file: "older.json", doc: { ...a.doc, finishedAt: "2000-01-01T00:00:00.000Z" } };
    const page = renderResultsPage([older, a]);
    expect(page.indexOf(`\`${a.file}\``)).toBeLessThan(page.indexOf("`older.json`"));
  });

  it("a file that is not a bench result is refused with its name", () => {
    writeFileSync(join(tmp, "broken.json"), JSON.stringify({ finishedAt: "2026-01-01" }));
    expect(() => readPublished(tmp)).toThrow(/broken\.json is not a bench result: it has no "options"/);
    expect(() => parseBenchDoc("x.json", "{")).toThrow(SyntaxError);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
