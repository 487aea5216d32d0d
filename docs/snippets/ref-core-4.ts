import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

const soniq = new Soniq({ backend: memoryBackend() });
declare function renderPage(page: number): Promise<void>;

// #region snippet
const build = soniq.job("reports.build", async (args: { pages: number }, ctx) => {
  for (let page = 1; page <= args.pages; page++) {
    await renderPage(page);
    ctx.progress({ done: page, total: args.pages }); // or a number: a percentage
  }
  return { url: "https://example.com/report.pdf" };
});

const handle = await build.enqueue({ pages: 40 });
(await soniq.jobs.get(handle.id))?.progress; // the last value written, e.g. { done: 12, total: 40 }
const outcome = await handle.result({ timeoutMs: 60_000 }); // JobOutcome<{ url: string }>
if (outcome.status === "done") console.log(outcome.result.url);
// #endregion snippet
