/**
 * The data behind `status`, `workers` and `queues list`. Queues come from `soniq.queues.list()` when core
 * has it; until then they are derived from what the app API shows: the queues of recent jobs, dead letters
 * and workers, each with its stats and the lag of its oldest ready job among the oldest 1000 queued.
 */
import type { QueueStats, WorkerInfo } from "@soniq/core";
import { type App, has, listWorkers, type QueueInfo, type ScheduleInfo } from "./features.js";

const SCAN = 1000;

async function queueNames(soniq: App, workers: WorkerInfo[]): Promise<string[]> {
  const [active, recent, dead] = await Promise.all([
    soniq.listJobs({ status: ["queued", "processing"], limit: SCAN }),
    soniq.listJobs({ limit: SCAN }),
    soniq.deadLetter.list({ limit: SCAN }),
  ]);
  const names = new Set<string>();
  for (const row of [...active, ...recent, ...dead]) names.add(row.queue);
  for (const w of workers) for (const q of w.queues) names.add(q);
  return [...names].sort();
}

/** Age of the oldest due queued job (ms), or null when none is ready. */
async function lagOf(soniq: App, queue: string, stats: QueueStats, now: number): Promise<number | null> {
  if (stats.queued === 0) return null;
  const offset = Math.max(0, stats.queued - SCAN);
  const oldest = await soniq.listJobs({ status: "queued", queue, limit: SCAN, offset });
  let lag: number | null = null;
  for (const job of oldest) {
    const waited = now - job.scheduledAt.getTime();
    if (waited >= 0 && (lag === null || waited > lag)) lag = waited;
  }
  return lag;
}

export async function listQueues(soniq: App, workers: WorkerInfo[], now: number): Promise<QueueInfo[]> {
  if (has(soniq, "queues.list")) {
    const queues = (await soniq.queues?.list?.()) ?? [];
    return queues.map((q) => ({ ...q, stats: { ...q.stats } as Record<string, number> }));
  }
  const names = await queueNames(soniq, workers);
  return Promise.all(
    names.map(async (name) => {
      const stats = await soniq.getQueueStats({ queue: name });
      return {
        name,
        paused: null,
        concurrency: null,
        groupConcurrency: null,
        rateLimit: null,
        stats: { ...stats },
        lagMs: await lagOf(soniq, name, stats, now),
      };
    }),
  );
}

export async function listSchedules(soniq: App): Promise<ScheduleInfo[] | null> {
  return has(soniq, "schedules.list")
    ? (((await soniq.schedules?.list?.()) ?? []) as unknown as ScheduleInfo[])
    : null;
}

export interface Overview {
  stats: QueueStats;
  queues: QueueInfo[];
  workers: WorkerInfo[];
  /** null when this core has no scheduler. */
  schedules: ScheduleInfo[] | null;
}

export async function overview(soniq: App, now: number): Promise<Overview> {
  const [stats, workers, schedules] = await Promise.all([
    soniq.getQueueStats(),
    listWorkers(soniq),
    listSchedules(soniq),
  ]);
  const queues = await listQueues(soniq, workers, now);
  return { stats, queues, workers, schedules };
}
