/**
 * The options tables of the documentation site (docs/reference/options.md, which core's README links to) are the
 * options declaration (describeOptions()), row for row.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeOptions } from "../src/app/options.js";

const PAGE = readFileSync(new URL("../../../docs/reference/options.md", import.meta.url), "utf8");

/** The rows of the first table after the heading that starts with `heading`. */
function tableAfter(heading: string): { name: string; default: string; meaning: string }[] {
  const lines = PAGE.split("\n");
  const at = lines.findIndex((l) => l.startsWith(`### ${heading}`));
  expect(at, `docs/reference/options.md heading "### ${heading}"`).toBeGreaterThanOrEqual(0);
  const start = lines.findIndex((l, i) => i > at && l.startsWith("| option"));
  const rows: { name: string; default: string; meaning: string }[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const [name = "", def = "", meaning = ""] = line
      .slice(1, -1)
      .split(" | ")
      .map((c) => c.trim());
    rows.push({ name: name.replace(/^`|`$/g, ""), default: def, meaning });
  }
  return rows;
}

describe("options/readme", () => {
  const declared = describeOptions();
  it.each([
    ["soniq", "`new Soniq(options)`"],
    ["job", "`soniq.job(name, handler, options)`"],
    ["enqueue", "Enqueue:"],
    ["worker", "`soniq.worker(options)`"],
  ] as const)(
    "options/readme-%s: the options page's table lists every option with its declared default and meaning",
    (key, heading) => {
      expect(tableAfter(heading)).toEqual(declared[key]);
    },
  );
});
