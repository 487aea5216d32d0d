/**
 * Keyset-style paging over core's offset-based lists (`listJobs`, `deadLetter.list` take limit/offset
 * today). The opaque cursor carries the offset plus the sort key (time, id) of the last row shown. The
 * next page reads from a little before that offset and skips rows up to the cursor's row, so jobs
 * inserted at the top (newest first) between two pages do not repeat rows, and rows deleted before
 * the offset (up to OVERLAP of them) do not skip any. Reads are offset-based underneath: deep pages
 * cost what OFFSET costs in the database (see the README's timings).
 *
 * With a `match` predicate (text search) rows are scanned in chunks of 1000, at most `scanCap` per
 * request; the cursor then marks where the scan stopped.
 */
import { badRequest } from "./errors.js";

const OVERLAP = 50;
const CHUNK = 1000;

export interface Cursor {
  /** Absolute offset of the row after the last one shown. */
  o: number;
  /** Sort time (epoch ms) and id of the last row shown or scanned. */
  t: number;
  i: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

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
  const c = value as Partial<Cursor> | null;
  if (
    typeof c !== "object" ||
    c === null ||
    !Number.isSafeInteger(c.o) ||
    (c.o as number) < 0 ||
    !Number.isFinite(c.t) ||
    typeof c.i !== "string" ||
    c.i.length > 200
  ) {
    throw invalid;
  }
  return { o: c.o as number, t: c.t as number, i: c.i };
}

export interface PageRequest<T> {
  fetch(offset: number, limit: number): Promise<T[]>;
  key(row: T): { t: number; id: string };
  limit: number;
  cursor?: Cursor | undefined;
  match?: ((row: T) => boolean) | undefined;
  scanCap?: number;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  /** Rows read to build this page (more than `items` when searching). */
  scanned: number;
  /** True when a search stopped at its scan cap before filling the page. */
  truncated: boolean;
}

export async function keysetPage<T>(req: PageRequest<T>): Promise<Page<T>> {
  const { cursor, limit, match } = req;
  const scanCap = req.scanCap ?? 10_000;
  const back = cursor ? Math.min(cursor.o, OVERLAP) : 0;
  let pos = cursor ? cursor.o - back : 0;
  let skipping = cursor !== undefined;
  const items: { row: T; index: number }[] = [];
  let scanned = 0;
  let last: { row: T; index: number } | null = null;
  let exhausted = false;
  const capped = () => match !== undefined && scanned >= scanCap;
  while (items.length <= limit && !capped()) {
    const want = Math.min(CHUNK, match ? CHUNK : limit + 1 - items.length + (skipping ? back : 0));
    const rows = await req.fetch(pos, want);
    let k = 0;
    for (; k < rows.length && items.length <= limit && !capped(); k++) {
      const row = rows[k] as T;
      const index = pos + k;
      if (skipping && cursor) {
        const key = req.key(row);
        if (key.id === cursor.i) {
          skipping = false;
          continue;
        }
        if (key.t >= cursor.t) continue;
        skipping = false;
      }
      scanned++;
      last = { row, index };
      if (!match || match(row)) items.push({ row, index });
    }
    pos += rows.length;
    if (rows.length < want && k === rows.length) {
      exhausted = true;
      break;
    }
  }
  const more = items.length > limit;
  const shown = items.slice(0, limit);
  let next: { row: T; index: number } | null = null;
  if (more) next = shown[shown.length - 1] ?? null;
  else if (!exhausted && match && last) next = last;
  const key = next ? req.key(next.row) : null;
  return {
    items: shown.map((x) => x.row),
    nextCursor: next && key ? encodeCursor({ o: next.index + 1, t: key.t, i: key.id }) : null,
    scanned,
    truncated: !more && !exhausted && match !== undefined,
  };
}
