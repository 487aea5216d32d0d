/**
 * The example's processes: `src/worker.ts` beside the app runs the jobs the app enqueued into the shared
 * SQLite file and stops gracefully on SIGTERM (exit 0, worker row marked stopped); `src/main.ts`
 * (`example:serve`) serves HTTP with its in-process worker and stops gracefully on SIGINT.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openSoniq } from "../src/app.js";
import { eventually, tempDir } from "./support.js";

const appDir = fileURLToPath(new URL("..", import.meta.url));

function start(
  entry: "src/worker.ts" | "src/main.ts",
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=source", entry], {
    cwd: appDir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => text, exited };
}

describe("example/worker process", () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it("example/worker-process: runs the app's jobs from another process and stops on SIGTERM", async () => {
    const file = dir.file();
    const { db, soniq, jobs } = await openSoniq({ kind: "sqlite", location: file }, { reviewDelayMs: 0 });
    const worker = start("src/worker.ts", { SONIQ_DATABASE_URL: `sqlite:${file}` });
    try {
      const { enqueued } = await db.orders.create(
        { customer: "Ada", email: "ada@example.com", totalCents: 100 },
        jobs.enqueueForNewOrder,
      );
      await eventually(async () => {
        const rows = await Promise.all(enqueued.map((r) => soniq.jobs.get(r.id)));
        expect(rows.map((r) => r?.status)).toEqual(["done", "done", "done", "done"]);
      }, 20_000);
      // The worker logs a job after its outcome is stored: the line can reach the pipe a moment after the row.
      await eventually(
        () => expect(worker.output()).toMatch(/orders\.reserve_stock \w+ done on attempt 3/),
        10_000,
      );
      const [row] = await soniq.backend.workers.list();
      expect(row?.status).toBe("active");

      worker.child.kill("SIGTERM");
      expect(await worker.exited).toBe(0);
      expect(worker.output()).toContain("SIGTERM: shutting down gracefully");
      expect(worker.output()).toContain("stopped cleanly");
      expect((await soniq.backend.workers.list())[0]?.status).toBe("stopped");
    } finally {
      worker.child.kill("SIGKILL");
      await soniq.close();
      await db.close();
    }
  }, 40_000);

  it("example/serve-process: example:serve answers HTTP, runs the jobs, and stops cleanly on SIGINT", async () => {
    const file = dir.file();
    const server = start("src/main.ts", { SONIQ_DATABASE_URL: `sqlite:${file}`, PORT: "0" });
    try {
      const base = await eventually(() => {
        const url = /Soniq example on (http:\/\/[\d.]+:\d+)/.exec(server.output())?.[1];
        if (!url) throw new Error(`not listening yet: ${server.output()}`);
        return url;
      }, 20_000);
      const res = await fetch(`${base}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ customer: "Ada", email: "ada@example.com", totalCents: 100 }),
      });
      expect(res.status).toBe(201);
      await eventually(() => expect(server.output()).toMatch(/\[worker\] orders\.send_invoice \w+ done/));

      server.child.kill("SIGINT");
      expect(await server.exited).toBe(0);
      expect(server.output()).toContain("SIGINT: shutting down gracefully");
      expect(server.output()).toContain("stopped cleanly");
    } finally {
      server.child.kill("SIGKILL");
    }
  }, 40_000);
});
