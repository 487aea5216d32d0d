/** A job's progress on its page (a bar and the value, redacted like args) and in the JSON API. */
import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";
import { afterEach, describe, expect, it } from "vitest";
import { call, handlerFor, json } from "./support.js";

const open: Soniq[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A processing job that reported `value`, as a worker's heartbeat would have written it. */
async function reporting(value: unknown, redact?: string[]) {
  const soniq = new Soniq({ backend: memoryBackend(), ...(redact ? { redact } : {}) });
  open.push(soniq);
  soniq.job("reports.build", async () => "ok");
  const { id } = await soniq.jobs.enqueue("reports.build", {});
  const [job] = (await soniq.backend.runs.claim({ queues: null, limit: 1, workerId: null })).jobs;
  await soniq.backend.runs.reportProgress([{ id, attempt: job?.attempts ?? 1, value }]);
  return { soniq, id, handler: handlerFor(soniq) };
}

describe("job progress", () => {
  it("progress/page-bar: the job page shows a bar for a value that says how far, and the value", async () => {
    const { id, handler } = await reporting({ done: 1, total: 4, phase: "render" });
    const page = await (await call(handler, `/jobs/${id}`)).text();
    expect(page).toContain('<progress data-testid="job-progress-bar" max="100" value="25"');
    expect(page).toContain('<span data-testid="job-progress-percent">25%</span>');
    expect(page).toMatch(/data-testid="job-progress">[^<]*&quot;phase&quot;: &quot;render&quot;/);
    // The page auto-refreshes (no data-refresh="off"), so the bar moves while the job runs.
    expect(page).not.toContain('data-refresh="off"');
    const api = await json<{ job: { progress: unknown } }>(await call(handler, `/api/jobs/${id}`));
    expect(api.job.progress).toEqual({ done: 1, total: 4, phase: "render" });
  });

  it("progress/page-value-only: a value that does not say how far shows as JSON without a bar; none says so", async () => {
    const { id, handler } = await reporting({ phase: "upload" });
    const page = await (await call(handler, `/jobs/${id}`)).text();
    expect(page).not.toContain("<progress");
    expect(page).toContain("&quot;phase&quot;: &quot;upload&quot;");
    const quiet = await reporting(null);
    expect(await (await call(quiet.handler, `/jobs/${quiet.id}`)).text()).toContain("None reported.");
  });

  it("progress/redacted: redact paths apply to progress on the page and in the API", async () => {
    const { id, handler } = await reporting({ percent: 50, token: "s3cr3t-token" }, ["token"]);
    const page = await (await call(handler, `/jobs/${id}`)).text();
    expect(page).not.toContain("s3cr3t-token");
    expect(page).toContain('value="50"');
    const api = await json<{ job: { progress: Record<string, unknown> } }>(
      await call(handler, `/api/jobs/${id}`),
    );
    expect(api.job.progress).toEqual({ percent: 50, token: "[redacted]" });
  });
});
