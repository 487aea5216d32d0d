/** Cursor pages over a keyset list: next and previous, rows arriving or expiring between pages, ties, bad cursors. */
import { describe, expect, it } from "vitest";
import { DashboardError } from "../src/errors.js";
import { decodeCursor, encodeCursor, keysetPage, type ListFrom, type Page } from "../src/paging.js";

interface Row {
  id: string;
  t: number;
}

const idOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** Newest first by (t, id), like core's lists; `from` is core's after/before. */
function list(rows: Row[]) {
  const cmp = (a: Row, b: Row) => b.t - a.t || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  return {
    rows,
    fetch: async (from: ListFrom | null, limit: number) => {
      const sorted = [...rows].sort(cmp);
      if (from === null) return sorted.slice(0, limit);
      const pos = { t: from.at.getTime(), id: from.id };
      if (from.direction === "older") return sorted.filter((r) => cmp(r, pos) > 0).slice(0, limit);
      return sorted.filter((r) => cmp(r, pos) < 0).slice(-limit);
    },
  };
}

/** `n` rows; `sameT` of them share each instant (ties broken by id). */
const rowsFrom = (n: number, start = 0, sameT = 1): Row[] =>
  Array.from({ length: n }, (_, i) => ({
    id: idOf(start + i),
    t: 1_000_000 + Math.floor((start + i) / sameT),
  }));

const newestFirst = (rows: Row[]) =>
  [...rows].sort((a, b) => b.t - a.t || (a.id < b.id ? 1 : -1)).map((r) => r.id);

function request(source: ReturnType<typeof list>, limit: number, cursor: string | null) {
  return keysetPage<Row>({
    fetch: source.fetch,
    key: (r) => ({ t: r.t, id: r.id }),
    limit,
    cursor: decodeCursor(cursor ?? undefined),
  });
}

async function walk(source: ReturnType<typeof list>, limit: number, between: (page: number) => void) {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const result: Page<Row> = await request(source, limit, cursor);
    seen.push(...result.items.map((r) => r.id));
    between(page);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return seen;
}

describe("cursor pages over keyset lists", () => {
  it("paging/inserts-at-top: rows added between pages never repeat or shift a row", async () => {
    const source = list(rowsFrom(30));
    let next = 30;
    const seen = await walk(source, 7, () => {
      source.rows.push(...rowsFrom(5, next));
      next += 5;
    });
    expect(seen).toEqual(newestFirst(rowsFrom(30)));
  });

  it("paging/deletes-between-pages: rows expiring behind or ahead of the cursor never make it skip one", async () => {
    const source = list(rowsFrom(40));
    const seen = await walk(source, 8, (page) => {
      if (page === 1) source.rows.splice(source.rows.length - 12, 10); // ten of the newest 16 (already shown) expire
    });
    expect(seen).toEqual(newestFirst(rowsFrom(40)));
  });

  it("paging/ties: rows sharing an instant page by id, each once", async () => {
    const rows = rowsFrom(23, 0, 6);
    expect(await walk(list(rows), 4, () => {})).toEqual(newestFirst(rows));
  });

  it("paging/previous: previous undoes next; previous at the top is the full first page", async () => {
    const source = list(rowsFrom(20, 0, 3));
    const all = newestFirst(source.rows);
    const first = await request(source, 5, null);
    expect(first.prevCursor).toBeNull();
    const second = await request(source, 5, first.nextCursor);
    const third = await request(source, 5, second.nextCursor);
    expect(third.items.map((r) => r.id)).toEqual(all.slice(10, 15));
    const back = await request(source, 5, third.prevCursor);
    expect(back.items.map((r) => r.id)).toEqual(all.slice(5, 10));
    expect(back.nextCursor).toBe(second.nextCursor);
    const top = await request(source, 5, back.prevCursor);
    expect(top.items.map((r) => r.id)).toEqual(all.slice(0, 5));
    expect(top.prevCursor).toBeNull();
    // Two rows arrive: "previous" from the second page is still the five rows before it, and one more
    // "previous" reaches the top, which shows the first page as it is now, full, without a previous link.
    source.rows.push(...rowsFrom(2, 100));
    const again = await request(source, 5, second.prevCursor);
    expect(again.items.map((r) => r.id)).toEqual(all.slice(0, 5));
    const now = await request(source, 5, again.prevCursor);
    expect(now.items.map((r) => r.id)).toEqual(newestFirst(source.rows).slice(0, 5));
    expect(now.prevCursor).toBeNull();
  });

  it("paging/largest-page: a page of 1000 (core's largest) knows whether another follows, both ways", async () => {
    const source = list(rowsFrom(1001));
    const asked: number[] = [];
    const capped = {
      ...source,
      fetch: (from: ListFrom | null, limit: number) => {
        asked.push(limit);
        return source.fetch(from, Math.min(limit, 1000));
      },
    };
    const first = await request(capped, 1000, null);
    expect(first.items).toHaveLength(1000);
    expect(asked).toEqual([1000, 1]);
    const second = await request(capped, 1000, first.nextCursor);
    expect(second.items.map((r) => r.id)).toEqual([idOf(0)]);
    expect(second.nextCursor).toBeNull();
    const back = await request(capped, 1000, second.prevCursor);
    expect(back.items.map((r) => r.id)).toEqual(first.items.map((r) => r.id));
    expect(back.prevCursor).toBeNull();
  });

  it("paging/bad-cursors: anything not issued here is a 400; an earlier version's cursor still reads", () => {
    const bad = [
      "!!",
      "x".repeat(401),
      Buffer.from("not json").toString("base64url"),
      encodeCursor({ d: "sideways" as never, t: 1, i: idOf(1) }),
      encodeCursor({ d: "older", t: 1.5, i: idOf(1) }),
      encodeCursor({ d: "older", t: 8.64e15, i: idOf(1) }),
      encodeCursor({ d: "older", t: 1, i: "none" }),
      Buffer.from("null").toString("base64url"),
    ];
    for (const raw of bad) {
      let err: unknown;
      try {
        decodeCursor(raw);
      } catch (e) {
        err = e;
      }
      expect(err instanceof DashboardError && err.status === 400, raw).toBe(true);
    }
    const legacy = Buffer.from(JSON.stringify({ o: 50, t: 1_000, i: idOf(3).toUpperCase() })).toString(
      "base64url",
    );
    expect(decodeCursor(legacy)).toEqual({ d: "older", t: 1_000, i: idOf(3) });
  });
});
