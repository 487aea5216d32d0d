/**
 * Feature detection against the operator API core has not shipped yet: the same CLI code must start
 * working when `soniq.queues`, `soniq.audit`, ... appear, and must not pass `{ actor }` before core accepts it.
 */
import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";
import { afterEach, describe, expect, it } from "vitest";
import { CliError } from "../src/errors.js";
import { type App, has, listWorkers, requireApi, writeOptions } from "../src/features.js";

const apps: Soniq[] = [];
const app = (): App => {
  const soniq = new Soniq({ backend: memoryBackend() });
  apps.push(soniq);
  return soniq as App;
};

afterEach(async () => {
  await Promise.all(apps.splice(0).map((s) => s.close()));
});

describe("features", () => {
  it("features/missing-api-names-it: requireApi throws SONIQ_CLI_UNSUPPORTED naming the method", () => {
    // a stand-in for a core from before queue controls (today's core has soniq.queues)
    const soniq = Object.assign(app(), { queues: undefined }) as App;
    let caught: unknown;
    try {
      requireApi(soniq, "queues.pause", "soniq queues pause");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CliError);
    expect((caught as CliError).code).toBe("SONIQ_CLI_UNSUPPORTED");
    expect((caught as CliError).message).toMatch(/^soniq queues pause needs soniq\.queues\.pause\(\)/);
    expect((caught as CliError).exitCode).toBe(1);
  });

  it("features/present-api-is-used: once core has the method, it is called bound to its owner", async () => {
    const soniq = app();
    const calls: unknown[] = [];
    const queues = {
      paused: new Set<string>(),
      async pause(this: { paused: Set<string> }, name: string, options: unknown) {
        this.paused.add(name);
        calls.push([name, options]);
      },
    };
    Object.assign(soniq, { queues });
    expect(has(soniq, "queues.pause")).toBe(true);
    await requireApi<(n: string, o: unknown) => Promise<void>>(
      soniq,
      "queues.pause",
      "x",
    )("emails", { actor: "a" });
    expect(queues.paused.has("emails")).toBe(true);
    expect(calls).toEqual([["emails", { actor: "a" }]]);
  });

  it("features/actor-only-with-audit: { actor } is passed once core has an audit log, not before", () => {
    // a stand-in for a core from before the audit log
    const soniq = Object.assign(app(), { audit: undefined }) as App;
    expect(writeOptions(soniq, "cli:ada@host")).toEqual({});
    Object.assign(soniq, { audit: { list: async () => [] } });
    expect(writeOptions(soniq, "cli:ada@host")).toEqual({ actor: "cli:ada@host" });
  });

  it("features/workers-app-api-first: an app-level listWorkers wins over the backend's", async () => {
    const soniq = app();
    expect(await listWorkers(soniq)).toEqual([]);
    Object.assign(soniq, { listWorkers: async () => [{ id: "from-app" }] });
    expect(await listWorkers(soniq)).toEqual([{ id: "from-app" }]);
  });
});
