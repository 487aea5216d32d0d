/**
 * `src/worker.ts` as its own process beside the app: it runs the jobs the app enqueued into the shared
 * SQLite file, and stops gracefully on SIGTERM (exit 0, worker row marked stopped).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openSoniq } from "../src/app.js";
import { eventually, tempDir } from "./support.js";

const appDir = fileURLToPath(new URL("..", import.meta.url));

function startWorker(file: string): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=source", "src/worker.ts"], {
    cwd: appDir,
    env: { ...process.env, SONIQ_DATABASE_URL: `sqlite:${file}` },
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
    const worker = startWorker(file);
    try {
      const { enqueued } = await db.orders.create(
        { customer: "Ada", email: "ada@example.com", totalCents: 100 },
        jobs.enqueueForNewOrder,
      );
      await eventually(async () => {
        const rows = await Promise.all(enqueued.map((r) => soniq.getJob(r.id)));
        expect(rows.map((r) => r?.status)).toEqual(["done", "done", "done", "done"]);
      }, 20_000);
      expect(worker.output()).toMatch(/orders\.reserve_stock \w+ done on attempt 3/);
      const [row] = await soniq.backend.listWorkers();
      expect(row?.status).toBe("active");

      worker.child.kill("SIGTERM");
      expect(await worker.exited).toBe(0);
      expect(worker.output()).toContain("SIGTERM: shutting down gracefully");
      expect(worker.output()).toContain("stopped cleanly");
      expect((await soniq.backend.listWorkers())[0]?.status).toBe("stopped");
    } finally {
      worker.child.kill("SIGKILL");
      await soniq.close();
      await db.close();
    }
  }, 40_000);
});
