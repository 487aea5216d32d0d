/** The cursor over offset lists: rows inserted at the top or deleted before the offset between two pages. */
import { describe, expect, it } from "vitest";
import { decodeCursor, keysetPage, type Page } from "../src/paging.js";

interface Row {
  id: string;
  t: number;
}

/** A newest-first list served by offset, like core's listJobs. */
function list(rows: Row[]) {
  return {
    rows,
    fetch: async (offset: number, limit: number) =>
      [...rows].sort((a, b) => b.t - a.t).slice(offset, offset + limit),
  };
}

const rowsFrom = (n: number, start = 0): Row[] =>
  Array.from({ length: n }, (_, i) => ({ id: `r${start + i}`, t: 1000 + start + i }));

async function walk(
  source: ReturnType<typeof list>,
  limit: number,
  between: (page: number) => void,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const result: Page<Row> = await keysetPage<Row>({
      fetch: source.fetch,
      key: (r) => ({ t: r.t, id: r.id }),
      limit,
      cursor: decodeCursor(cursor ?? undefined),
    });
    seen.push(...result.items.map((r) => r.id));
    between(page);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return seen;
}

describe("cursor pages over offsets", () => {
  it("paging/inserts-at-top: rows added between pages never repeat a row", async () => {
    const source = list(rowsFrom(30));
    let next = 30;
    const seen = await walk(source, 7, () => {
      source.rows.push(...rowsFrom(5, next));
      next += 5;
    });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(
      rowsFrom(30)
        .reverse()
        .map((r) => r.id),
    );
  });

  it("paging/deletes-before-offset: rows deleted behind the cursor never make it skip one", async () => {
    const source = list(rowsFrom(40));
    const seen = await walk(source, 8, (page) => {
      if (page === 1) source.rows.splice(source.rows.length - 12, 10); // ten of the newest 16 (already shown) expire
    });
    expect(seen).toEqual(
      rowsFrom(40)
        .reverse()
        .map((r) => r.id)
        .filter((_, i) => i < 16 || i >= 16),
    );
    expect(seen).toHaveLength(40);
  });

  it("paging/search-cap: a search stops at its scan cap and continues from there", async () => {
    const source = list(rowsFrom(50));
    const match = (r: Row) => r.id.endsWith("7");
    const first = await keysetPage<Row>({
      fetch: source.fetch,
      key: (r) => ({ t: r.t, id: r.id }),
      limit: 10,
      match,
      scanCap: 20,
    });
    expect(first.truncated).toBe(true);
    expect(first.items.map((r) => r.id)).toEqual(["r47", "r37"]);
    const found = first.items.map((r) => r.id);
    let cursor = first.nextCursor;
    let calls = 1;
    while (cursor && calls < 10) {
      const page: Page<Row> = await keysetPage<Row>({
        fetch: source.fetch,
        key: (r) => ({ t: r.t, id: r.id }),
        limit: 10,
        match,
        scanCap: 20,
        cursor: decodeCursor(cursor),
      });
      found.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
      calls++;
    }
    expect(found).toEqual(["r47", "r37", "r27", "r17", "r7"]);
    expect(calls).toBe(3);
  });
});
