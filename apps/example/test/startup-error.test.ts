/**
 * A first run against a PostgreSQL that is down, or without the database in the URL, ends with one line
 * that says what to do (and exit 1), not a dump of the driver's error object.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ADMIN_URL } from "./support.js";

const appDir = fileURLToPath(new URL("..", import.meta.url));

function tour(databaseUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=source", "src/tour.ts"], {
      cwd: appDir,
      env: { ...process.env, SONIQ_DATABASE_URL: databaseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("example/startup-errors", () => {
  it("example/startup-error-database-missing: one line naming the database and how to create it", async () => {
    const url = new URL(ADMIN_URL);
    url.pathname = "/soniq_no_such_database";
    const { code, stderr } = await tour(url.toString());
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([
      `PostgreSQL at ${url.hostname}:${url.port || "5432"} has no database "soniq_no_such_database": create it (createdb -h ${url.hostname} -U ${url.username || "postgres"} soniq_no_such_database) or point SONIQ_DATABASE_URL at one that exists.`,
    ]);
  }, 30_000);

  it("example/startup-error-unreachable: one line saying PostgreSQL is not answering", async () => {
    // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
    const { code, stderr } = await tour("postgres://postgres@127.0.0.1:1/soniq");
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([
      "PostgreSQL is not answering at 127.0.0.1:1: start it, or fix the host and port in SONIQ_DATABASE_URL.",
    ]);
  }, 30_000);
});
