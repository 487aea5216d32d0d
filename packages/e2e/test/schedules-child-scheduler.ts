/**
 * A scheduler process for schedules-processes.test.ts: `node --conditions=source --import tsx
 * schedules-child-scheduler.ts <sqlite|postgres> <file-or-url> <checkIntervalMs>`. It declares the
 * every-second schedule `proc.tick`, starts a scheduler, and reports over IPC when it becomes or stops
 * being the leader, until the parent kills it.
 */
import { postgresBackend } from "@soniq/backend-postgres";
import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";

const [kind, target, interval] = process.argv.slice(2) as [string, string, string];
const backend =
  kind === "sqlite" ? sqliteBackend({ filename: target }) : postgresBackend({ connectionString: target });
const soniq = new Soniq({ backend });
soniq.schedules.declare("proc.tick", { cron: "* * * * * *", catchUp: { withinMs: 60_000 } });
const scheduler = soniq.scheduler({ checkIntervalMs: Number(interval) });
await scheduler.start();
process.send?.({ ready: process.pid });
let leader = false;
// Not unref'd: this interval is what keeps the process alive (the scheduler's timers never do).
setInterval(() => {
  if (scheduler.isLeader !== leader) {
    leader = scheduler.isLeader;
    process.send?.({ leader, pid: process.pid, at: Date.now() });
  }
}, 10);
