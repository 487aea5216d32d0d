/**
 * Cursor pages over core's keyset lists (`jobs.list` / `deadLetters.list` with `after` or `before` a row).
 * A cursor is opaque in the URL: base64url JSON of the direction and the sort key (instant in epoch ms,
 * id) of the row the page starts from (core places a job by its id alone, ids being time-ordered; the instant
 * stays in the cursor for dead letters and for cursors issued before). "Next" continues after the last row shown (older rows), "previous"
 * before the first (newer rows); each page reads about `limit` rows at any depth, and rows arriving or
 * expiring between two pages neither repeat nor skip any. A "previous" page that reaches the top of the
 * list is the first page (full, without a previous link). Filters, text search (`q`) included, are core's:
 * a page is the filtered list's rows.
 */
import { isJobId } from "@soniq/core";
import { badRequest } from "./errors.js";

const CHUNK = 1000;
/** The instants core takes (years 1 to 9999). */
const MIN_T = Date.parse("0001-01-01T00:00:00.000Z");
const MAX_T = Date.parse("9999-12-31T23:59:59.999Z");

export type Direction = "older" | "newer";

export interface Cursor {
  /** `older`: the rows after this one (the next page); `newer`: the rows before it (the previous page). */
  d: Direction;
  /** The row's sort instant (epoch ms) and id. */
  t: number;
  i: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

/** The cursor of a URL, or undefined for none; anything this dashboard did not issue is a 400. */
export function decodeCursor(raw: string | undefined): Cursor | undefined {
  if (raw === undefined || raw === "") return undefined;
  const invalid = badRequest("cursor is not one this dashboard issued; start from the first page");
  if (raw.length > 400 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    throw invalid;
  }
  if (typeof value !== "object" || value === null) throw invalid;
  const c = value as { d?: unknown; t?: unknown; i?: unknown; o?: unknown };
  // Cursors of earlier versions carried an offset (`o`) and meant "after this row".
  const d = c.d === undefined && c.o !== undefined ? "older" : c.d;
  if (
    (d !== "older" && d !== "newer") ||
    typeof c.t !== "number" ||
    !Number.isSafeInteger(c.t) ||
    c.t < MIN_T ||
    c.t > MAX_T ||
    typeof c.i !== "string" ||
    !isJobId(c.i)
  ) {
    throw invalid;
  }
  return { d, t: c.t, i: c.i.toLowerCase() };
}

/** Where core's list starts: after or before the row with this sort key; null = from the top. */
export interface ListFrom {
  direction: Direction;
  at: Date;
  id: string;
}

export interface PageRequest<T> {
  /** Core's list from `from`, `limit` rows (at most 1000), newest first as core answers it. */
  fetch(from: ListFrom | null, limit: number): Promise<T[]>;
  key(row: T): { t: number; id: string };
  limit: number;
  cursor?: Cursor | undefined;
}

export interface Page<T> {
  items: T[];
  /** The page after this one (older rows), or null at the end. */
  nextCursor: string | null;
  /** The page before this one (newer rows), or null on the first page. */
  prevCursor: string | null;
}

/**
 * Up to `want` rows from `start` in `direction`, nearest the start first, in reads of at most `CHUNK` rows
 * (core's largest page; a page of 1000 reads one row more to know whether another page follows).
 */
async function read<T>(req: PageRequest<T>, direction: Direction, start: ListFrom | null, want: number) {
  const out: T[] = [];
  let from = start;
  while (out.length < want) {
    const ask = Math.min(CHUNK, want - out.length);
    const rows = await req.fetch(from, ask);
    // Core answers newest first; reading towards newer rows takes them nearest (oldest) first.
    out.push(...(direction === "newer" ? [...rows].reverse() : rows));
    const last = out[out.length - 1];
    if (rows.length < ask || last === undefined) break;
    const key = req.key(last);
    from = { direction, at: new Date(key.t), id: key.id };
  }
  return out;
}

function cursorAt<T>(req: PageRequest<T>, d: Direction, row: T | undefined): string | null {
  if (row === undefined) return null;
  const key = req.key(row);
  return encodeCursor({ d, t: key.t, i: key.id });
}

export async function keysetPage<T>(req: PageRequest<T>): Promise<Page<T>> {
  const { cursor, limit } = req;
  const start = cursor ? { direction: cursor.d, at: new Date(cursor.t), id: cursor.i } : null;
  if (cursor?.d === "newer") {
    const rows = await read(req, "newer", start, limit + 1);
    // Nothing further up: this is the top of the list, so show the first page as it is.
    if (rows.length <= limit) return keysetPage({ ...req, cursor: undefined });
    const items = rows.slice(0, limit).reverse();
    return {
      items,
      nextCursor: cursorAt(req, "older", items[items.length - 1]),
      prevCursor: cursorAt(req, "newer", items[0]),
    };
  }
  const rows = await read(req, "older", start, limit + 1);
  const items = rows.slice(0, limit);
  let prevCursor: string | null = null;
  if (cursor) prevCursor = cursorAt(req, "newer", items[0]) ?? encodeCursor({ ...cursor, d: "newer" });
  return {
    items,
    nextCursor: rows.length > limit ? cursorAt(req, "older", items[items.length - 1]) : null,
    prevCursor,
  };
}
