/**
 * A worker process SIGKILLed between an event and its delivery: the delivery row committed with the job's
 * completion (the outbox), so a worker started afterwards delivers it, once, with the same delivery id.
 * SQL backends only (the memory backend cannot be shared between processes).
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Soniq } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, postgresKind, sqliteKind, uniqueName } from "./runtime-support.js";
import { receiver, SECRET, SECRET_KEY } from "./webhooks-support.js";

const CHILD = fileURLToPath(new URL("./webhooks-child-worker.ts", import.meta.url));

describe.each([sqliteKind, postgresKind].map((make) => [make().name, make] as const))(
  "webhooks/process-kill on %s",
  (name, make) => {
    const kind = make();
    beforeAll(() => kind.setup(), 30_000);
    afterAll(() => kind.teardown(), 30_000);

    it("webhooks/killed-before-delivery: the delivery written with the event survives SIGKILL and is delivered once after restart", async () => {
      const queue = uniqueName("q");
      const r = await receiver();
      const options = {
        allowUnknownJobNames: true,
        webhooks: { secretKey: SECRET_KEY, allowPrivateNetworks: true },
      };
      const soniq = new Soniq({ backend: kind.create(), ...options });
      let child: ChildProcess | undefined;
      let restarted: Soniq | undefined;
      try {
        await soniq.setup();
        const endpoint = await soniq.webhooks.register({
          url: r.url,
          events: ["job.completed"],
          secret: SECRET,
        });
        child = fork(CHILD, [name, kind.target(), queue], {
          execArgv: ["--conditions=source", "--import", "tsx"],
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        });
        const messages: Record<string, string>[] = [];
        child.on("message", (m) => messages.push(m as Record<string, string>));
        await eventually(() => expect(messages.some((m) => m.ready)).toBe(true), 45_000);
        const { id } = await soniq.jobs.enqueue("hooks.crash", {}, { queue });
        const [pending] = await eventually(async () => {
          const rows = await soniq.webhooks.deliveries({ endpointId: endpoint.id });
          expect(rows.map((d) => [d.status, d.attempts])).toEqual([["pending", 0]]);
          return rows;
        }, 20_000);
        expect((await soniq.jobs.get(id))?.status).toBe("done");
        child.kill("SIGKILL");
        await new Promise((resolve) => child?.once("exit", resolve));
        expect(r.requests).toHaveLength(0);

        restarted = new Soniq({ backend: kind.createPeer(), ...options });
        const worker = restarted.worker({ queues: [uniqueName("idle")], pollIntervalMs: 50 });
        await worker.start();
        await eventually(async () => {
          expect((await restarted?.webhooks.delivery(pending?.id as string))?.status).toBe("delivered");
        }, 20_000);
        await worker.stop();
        expect(r.requests.map((q) => q.deliveryId)).toEqual([pending?.id]);
        expect(r.requests[0]?.payload.data).toMatchObject({ jobId: id, jobName: "hooks.crash" });
        expect(r.signedWith(SECRET)).toHaveLength(1);
      } finally {
        if (child && child.exitCode === null) child.kill("SIGKILL");
        await restarted?.close();
        await soniq.close();
        await r.close();
      }
    }, 90_000);
  },
);
