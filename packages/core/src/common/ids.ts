/**
 * Job ids: UUID version 7 (RFC 9562), laid out by the `uuid` package. The first 48 bits are the creation
 * time in milliseconds, then a 32-bit counter that starts at a random value each millisecond and counts up
 * within it, then random bits, so ids are monotonic within this process and the ids of jobs enqueued
 * together are adjacent in every index keyed by id. Postgres and SQLite then write a batch's primary-key
 * entries, and the new row versions of a claim or a completion, into a few neighbouring index pages instead
 * of one random page each (version 4 ids): the drain spent about a fifth less Postgres CPU per job
 * (bench/README.md, "Time-ordered job ids"). The ids stay unguessable (the counter's start and the last 42
 * bits are random). A job id is still a plain UUID to every reader: nothing parses the time back out of it.
 *
 * The counter and the entropy are kept here, not in `uuid`'s default state: its default draws 16 bytes per
 * id through WebCrypto's `getRandomValues` (about 2 µs each on Node 20, a tenth of a bulk enqueue's cost per
 * job), and passing our own bytes makes `uuid` skip its monotonic counter. One `randomFillSync` fills the
 * bytes of 256 ids.
 */
import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

const POOL = new Uint8Array(16 * 256);
let next = POOL.length;
let lastMs = Number.NEGATIVE_INFINITY;
let seq = 0;

function random16(): Uint8Array {
  if (next + 16 > POOL.length) {
    randomFillSync(POOL);
    next = 0;
  }
  const bytes = POOL.subarray(next, next + 16);
  next += 16;
  return bytes;
}

/** A fresh job id (UUIDv7, lower-case, hyphenated), greater than every id this process made before. */
export function newJobId(): string {
  const random = random16();
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    // A random 31-bit start (as `uuid` does), so two processes rarely share a counter value.
    seq =
      (((random[6] ?? 0) & 0x7f) << 24) |
      ((random[7] ?? 0) << 16) |
      ((random[8] ?? 0) << 8) |
      (random[9] ?? 0);
  } else {
    seq = (seq + 1) | 0;
    // 2^32 ids in one millisecond: borrow the next one (the clock catches up).
    if (seq === 0) lastMs++;
  }
  return v7({ msecs: lastMs, seq, random });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `value` can name a job, dead letter, flow, webhook endpoint or delivery: a UUID string in either
 * case (every id Soniq mints is one; rows are looked up by its lower-case form). The one id check every
 * surface uses (the guard, filters, the CLI, the dashboard, the MCP server).
 */
export function isJobId(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}
