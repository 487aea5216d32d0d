/**
 * Job ids: UUID version 7 (RFC 9562), from the `uuid` package. The first 48 bits are the creation time in
 * milliseconds and the package keeps ids monotonic within a millisecond, so the ids of jobs enqueued together
 * are adjacent in every index keyed by id. Postgres and SQLite then write a batch's primary-key entries, and
 * the new row versions of a claim or a completion, into a few neighbouring index pages instead of one random
 * page each (version 4 ids): the benchmark's drain spent about a fifth less Postgres CPU per job, and bulk
 * enqueues ran faster (bench/README.md, "Time-ordered job ids"). The other 74 bits are random, so ids stay
 * unguessable. A job id is still a plain UUID to every reader: nothing parses the time back out of it.
 */
import { v7 } from "uuid";

/** A fresh job id (UUIDv7, lower-case, hyphenated). */
export function newJobId(): string {
  return v7();
}
