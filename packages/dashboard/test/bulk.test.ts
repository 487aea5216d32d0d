/**
 * Bulk actions over more than one page of dead letters: every match counted and acted on exactly
 * once, also when many rows share one millisecond (a frozen clock on the memory backend); a selection of
 * 1000 ids (core's most) is one call with one audit row.
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
    it(`${c.name}: the dry run counts every match once; purge by 1000 ids, then by filter, removes exactly those`, {
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
        const selected = (await soniq.deadLetters.list({ limit: 1000, offset: 700 })).map((d) => d.id);
        const extra = "0193c6e2-ffff-7000-8000-000000000000";
        expect((await post({ ids: [...selected, extra] })).status).toBe(400); // 1001 ids: core's limit
        expect(await json(await post({ ids: selected }))).toEqual({
          action: "purge",
          dryRun: false,
          count: 1000,
          refused: 0,
          notFound: 0,
        });
        expect(await soniq.audit.list({ action: "dead_letter.purge_where" })).toHaveLength(3); // 2 dry runs
        // The name matches every dead letter left: that is "all", which must be said.
        expect((await post({ filter: { name: "imports.row" } })).status).toBe(400);
        expect(await json(await post({ filter: { name: "imports.row" }, all: true }))).toEqual({
          action: "purge",
          dryRun: false,
          count: 1_300,
          refused: 0,
        });
        expect((await soniq.jobs.stats()).dead_letter).toBe(0);
      } finally {
        await soniq.close();
      }
    });
  }
});

describe("bulk/everything-guard", () => {
  it("bulk/everything-needs-all: a filter that narrows nothing (since 0, a far until, a name every row has) acts only with all: true", async () => {
    const soniq = await deadLetters(3, () => Date.now());
    try {
      const handler = handlerFor(soniq, { apiKeys: KEYS });
      for (const path of ["/api/dead-letters/replay-where", "/api/dead-letters/purge-where"]) {
        const post = (body: unknown) => call(handler, path, { method: "POST", key: WRITE_KEY, body });
        for (const filter of [{ since: "0" }, { until: "2999-01-01T00:00:00Z" }, { name: "imports.row" }]) {
          const res = await post({ filter });
          expect(res.status, `${path} ${JSON.stringify(filter)}`).toBe(400);
          expect(JSON.stringify(await json(res))).toContain("all: true");
        }
        // A dry run only counts: it is answered.
        expect(await json(await post({ filter: { since: "0" }, dryRun: true }))).toMatchObject({ count: 3 });
      }
      expect((await soniq.jobs.stats()).dead_letter).toBe(3);
      expect((await soniq.jobs.stats()).queued).toBe(0);
      const purge = (body: unknown) =>
        call(handler, "/api/dead-letters/purge-where", { method: "POST", key: WRITE_KEY, body });
      expect(await json(await purge({ filter: { since: "0" }, all: true }))).toMatchObject({ count: 3 });
      expect((await soniq.jobs.stats()).dead_letter).toBe(0);
    } finally {
      await soniq.close();
    }
  });
});
