/**
 * The root `example:serve` script, run through pnpm as the README and docs/reference/example-app.md tell users to: a signal to pnpm
 * (SIGTERM from a supervisor) or to the whole process group (Ctrl-C in a terminal) reaches the server,
 * which stops gracefully; pnpm then exits 0, prints no ELIFECYCLE, and the port is free again.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { eventually, tempDir } from "./support.js";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));

/** `pnpm example:serve` in its own process group (as a terminal would start it), on a free port. */
function serve(file: string) {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("npm_")) env[k] = v;
  const child: ChildProcess = spawn("pnpm", ["example:serve"], {
    cwd: repoRoot,
    env: { ...env, SONIQ_DATABASE_URL: `sqlite:${file}`, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let text = "";
  const append = (chunk: Buffer) => {
    text += chunk.toString();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => text, exited };
}

async function listening(output: () => string): Promise<{ url: string; port: number }> {
  return eventually(() => {
    const found = /Soniq example on (http:\/\/[\d.]+:(\d+))/.exec(output());
    if (!found?.[1] || !found[2]) throw new Error(`not listening yet: ${output()}`);
    return { url: found[1], port: Number(found[2]) };
  }, 30_000);
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

describe("example/serve script", () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  for (const [id, signal, target] of [
    ["example/serve-script-sigterm", "SIGTERM", "pnpm"],
    ["example/serve-script-ctrl-c", "SIGINT", "group"],
  ] as const) {
    it(`${id}: ${signal} to ${target === "pnpm" ? "the pnpm process" : "the process group"} stops the server, exit 0`, async () => {
      const server = serve(dir.file());
      const pid = server.child.pid as number;
      try {
        const { url, port } = await listening(server.output);
        expect((await fetch(`${url}/stats`)).status).toBe(200);

        process.kill(target === "group" ? -pid : pid, signal);
        expect(await server.exited).toBe(0);
        expect(server.output()).toContain(`${signal}: shutting down gracefully`);
        expect(server.output()).toContain("stopped cleanly");
        expect(server.output()).not.toContain("ELIFECYCLE");
        expect(await refused(port)).toBe(true);
      } finally {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone: the normal case
        }
      }
    }, 60_000);
  }
});
