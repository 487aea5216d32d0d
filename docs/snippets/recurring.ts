import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";
import { manualClock } from "@soniq/testkit";

// A manual clock (from the testkit) drives the scheduler in tests (and here): time moves only when you advance it.
const clock = manualClock(new Date("2026-03-28T22:30:00Z"));
const soniq = new Soniq({ backend: memoryBackend({ now: clock.now }), clock });

const report = soniq.job("reports.nightly_sales", async ({ day }: { day: string }) => ({ built: day }));
// 02:00 in Berlin, every day (5 or 6 cron fields; `every: "15m"` for intervals). Checked at once.
soniq.schedules.declare(report, { cron: "0 2 * * *", timezone: "Europe/Berlin", args: { day: "yesterday" } });
await soniq.setup();

console.log((await soniq.schedules.upcoming("reports.nightly_sales", 2)).map((d) => d.toISOString()));
// -> [ '2026-03-29T01:00:00.000Z', '2026-03-30T00:00:00.000Z' ]
// (02:00 does not exist on 29 March in Berlin, DST starts: it fires at the first valid instant, 03:00 CEST)

const scheduler = soniq.scheduler({ checkIntervalMs: 60_000 }); // one leader across processes; standbys wait
await scheduler.start();
await clock.advance(26 * 3_600_000); // two nights pass, no sleeping

const ticks = await soniq.schedules.history("reports.nightly_sales", { limit: 10 }); // the tick ledger
console.log(ticks.map((t) => `${t.tickAt.toISOString()} ${t.outcome}`));
// -> [ '2026-03-30T00:00:00.000Z fired', '2026-03-29T01:00:00.000Z fired' ]
await soniq.worker().runOnce();
console.log((await soniq.jobs.get(ticks[0]?.jobId as string))?.result ?? null);
// -> { built: 'yesterday' }
await scheduler.stop();
await soniq.close();
