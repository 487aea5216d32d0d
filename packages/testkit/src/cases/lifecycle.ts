import { randomUUID } from "node:crypto";
import { defineCase } from "../define-case.js";
import { deepEqual, equal, rejectsWith } from "./helpers.js";

export const lifecycleCases = [
  defineCase({
    id: "lifecycle/migrate-is-idempotent",
    title: "migrate() twice applies nothing the second time and leaves nothing pending",
    async run({ backend }) {
      const again = await backend.migrate();
      deepEqual(again.appliedNow, [], "a second migrate() must apply nothing");
      const status = await backend.migrationStatus();
      deepEqual(status.pending, [], "after migrate(), migrationStatus().pending must be empty");
    },
  }),
  defineCase({
    id: "lifecycle/declares-capabilities",
    title: "capabilities declares notify, transactionalEnqueue, advisoryLocks and multiProcess as booleans",
    async run({ backend }) {
      for (const key of ["notify", "transactionalEnqueue", "advisoryLocks", "multiProcess"] as const) {
        equal(typeof backend.capabilities[key], "boolean", `capabilities.${key} must be a boolean`);
      }
      equal(typeof backend.name, "string", "backend.name must be a string");
    },
  }),
  defineCase({
    id: "lifecycle/closed-backend-rejects",
    title: "after close(), calls reject with SONIQ_CLOSED and close() stays idempotent",
    async run({ backend, newJob }) {
      await backend.close();
      await rejectsWith(backend.getJob(randomUUID()), "SONIQ_CLOSED", "getJob() after close()");
      await rejectsWith(backend.enqueue(newJob()), "SONIQ_CLOSED", "enqueue() after close()");
      await backend.close();
    },
  }),
  defineCase({
    id: "lifecycle/unknown-ids-are-not-found",
    title: "ids that name no row (including malformed ones) read as null and write as false/0, never throw",
    async run({ backend }) {
      for (const id of [randomUUID(), "not-a-uuid"]) {
        const ref = { id, attempt: 1 };
        equal(await backend.getJob(id), null, `getJob("${id}") must return null`);
        equal(await backend.cancel(id), false, `cancel("${id}") must return false`);
        equal(
          await backend.complete([{ ...ref, result: null, resultTtlMs: 1000 }]),
          0,
          `complete of "${id}" must apply 0`,
        );
        equal(
          await backend.retry(ref, { error: "e", delayMs: 0 }),
          false,
          `retry of "${id}" must return false`,
        );
        equal(await backend.nack(ref), false, `nack of "${id}" must return false`);
        equal(
          await backend.reschedule(ref, { delayMs: 0 }),
          false,
          `reschedule of "${id}" must return false`,
        );
        equal(
          await backend.markJobDeadLetter(id, { reason: "permanent_failure", error: null }),
          false,
          `markJobDeadLetter("${id}") must return false`,
        );
        equal(await backend.getDeadLetterJob(id), null, `getDeadLetterJob("${id}") must return null`);
        equal(await backend.purgeDeadLetterJob(id), false, `purgeDeadLetterJob("${id}") must return false`);
        equal(
          await backend.replayDeadLetterJob(id, { newId: randomUUID() }),
          null,
          `replayDeadLetterJob("${id}") must return null`,
        );
      }
    },
  }),
];
