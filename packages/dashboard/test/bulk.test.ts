/**
 * Bulk actions over more than one page of dead letters: every match counted and acted on exactly
 * once, also when many rows share one millisecond (a frozen clock on the memory backend).
 */
import { memoryBackend } from "@soniq/backend-memory";
import { PermanentError, Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { call, handlerFor, json, KEYS, WRITE_KEY } from "./support.js";

async function deadLetters(count: number, now: () => number): Promise<Soniq> {
  const soniq = new Soniq({ backend: memoryBackend({ now }) });
  await soniq.setup();
  const fail = soniq.job("imports.row", async () => {
    throw new PermanentError("bad row");
  });
  await soniq.jobs.enqueueMany(Array.from({ length: count }, (_, i) => ({ job: fail, args: { i } })));
  await soniq.worker({ concurrency: 50 }).runOnce({ maxJobs: count });
  return soniq;
}

describe("bulk over many pages", () => {
  const cases = [
    {
      name: "bulk/many-pages-distinct-times",
      clock: () => {
        let t = Date.parse("2026-11-01T00:00:00Z");
        return () => (t += 1);
      },
    },
    {
      name: "bulk/many-pages-one-millisecond",
      clock: () => {
        const t = Date.parse("2026-11-01T00:00:00Z");
        return () => t;
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: the dry run counts every match once and purge removes exactly those`, {
      timeout: 30_000,
    }, async () => {
      const soniq = await deadLetters(2_300, c.clock());
      try {
        expect((await soniq.jobs.stats()).dead_letter).toBe(2_300);
        const handler = handlerFor(soniq, { apiKeys: KEYS });
        const post = (body: unknown) =>
          call(handler, "/api/dead-letters/purge-where", { method: "POST", key: WRITE_KEY, body });
        expect(await json(await post({ filter: { name: "imports.row" }, dryRun: true }))).toMatchObject({
          count: 2_300,
        });
        expect(await json(await post({ filter: { q: "bad row" }, dryRun: true }))).toMatchObject({
          count: 2_300,
        });
        expect(await json(await post({ filter: { name: "imports.row" } }))).toMatchObject({
          count: 2_300,
          failed: [],
        });
        expect((await soniq.jobs.stats()).dead_letter).toBe(0);
      } finally {
        await soniq.close();
      }
    });
  }
});
