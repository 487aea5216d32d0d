/** The queue tables say what the CLI says: the same state word and the same limits, read-only or not. */
import { queueLimitsText } from "@soniq/core/ops";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, handlerFor, type Seeded, seededApp } from "./support.js";

let app: Seeded;

beforeAll(async () => {
  app = await seededApp();
  await app.soniq.queues.configure("reports", { concurrency: 2, rateLimit: { max: 100, perMs: 60_000 } });
});
afterAll(() => app.soniq.close());

describe("queue words", () => {
  it("pages/queue-limits-read-only: without keys, the queue tables show each queue's limits and 'active', never 'running'", async () => {
    const readOnly = handlerFor(app.soniq);
    expect(
      queueLimitsText({ concurrency: 2, groupConcurrency: null, rateLimit: { max: 100, perMs: 60_000 } }),
    ).toBe("concurrency 2, rate 100/1m");
    for (const path of ["/", "/queues"]) {
      const page = await (await call(readOnly, path)).text();
      const table = page.slice(
        page.indexOf('data-testid="queues"'),
        page.indexOf("</table>", page.indexOf('data-testid="queues"')),
      );
      const row = (queue: string) =>
        table.slice(table.indexOf(`data-queue="${queue}"`)).split("</tr>")[0] ?? "";
      expect(row("reports"), path).toContain("concurrency 2, rate 100/1m");
      expect(row("reports"), path).toContain(">active<");
      expect(row("default"), path).toContain(">none<");
      expect(table, path).not.toContain("running");
    }
  });
});
