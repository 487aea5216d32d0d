import { randomUUID } from "node:crypto";
import type { MigrationReport } from "@soniq/core/backend";
import { defineCase } from "../define-case.js";
import { deadLetter, deepEqual, describeError, done, equal, rejectsWith, requeue } from "./helpers.js";

export const lifecycleCases = [
  defineCase({
    id: "lifecycle/migrate-is-idempotent",
    title:
      "the backend's own migrations.apply() run twice applies nothing the second time; status is unchanged",
    async run({ rawBackend }) {
      // The unguarded backend: the guard runs apply() once and caches it, which would hide a second run.
      const before = await rawBackend.migrations.status();
      deepEqual(before.pending, [], "after the kit's migrations.apply(), status().pending must be empty");
      for (const run of ["apply() on a migrated store", "a second apply()"]) {
        let report: MigrationReport;
        try {
          report = await rawBackend.migrations.apply();
        } catch (err) {
          throw new Error(
            `${run} rejected (${describeError(err)}): migrations.apply() must be idempotent, applying nothing once up to date`,
            { cause: err },
          );
        }
        deepEqual(report.appliedNow, [], `${run} must apply nothing (appliedNow [])`);
        deepEqual(report.pending, [], `${run} must leave nothing pending`);
        deepEqual(
          report.applied,
          before.applied,
          `${run} must report the same applied migrations as status()`,
        );
      }
      deepEqual(
        await rawBackend.migrations.status(),
        before,
        "status() after two more apply() calls must be unchanged",
      );
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
      await rejectsWith(backend.jobs.get(randomUUID()), "SONIQ_CLOSED", "jobs.get() after close()");
      await rejectsWith(backend.jobs.enqueue(newJob(), {}), "SONIQ_CLOSED", "jobs.enqueue() after close()");
      await backend.close();
    },
  }),
  defineCase({
    id: "lifecycle/unknown-ids-are-not-found",
    title: "ids that name no row (including malformed ones) read as null and write as false, never throw",
    async run({ backend }) {
      const unknown = { id: randomUUID(), attempts: 1 };
      // Settle items come from claims, so only an unknown UUID (a row deleted meanwhile) is meaningful there.
      deepEqual(
        await backend.runs.settle([done(unknown), requeue(unknown), deadLetter(unknown)]),
        [false, false, false],
        `runs.settle of done, requeue and dead_letter items for an unknown id must apply none`,
      );
      for (const id of [randomUUID(), "not-a-uuid"]) {
        equal(await backend.jobs.get(id), null, `jobs.get("${id}") must return null`);
        equal(await backend.jobs.cancel(id), false, `jobs.cancel("${id}") must return false`);
        equal(await backend.deadLetters.get(id), null, `deadLetters.get("${id}") must return null`);
        equal(await backend.deadLetters.purge(id), false, `deadLetters.purge("${id}") must return false`);
        equal(
          await backend.deadLetters.replay(id, {
            newId: randomUUID(),
            traceId: null,
            traceContext: null,
            queue: null,
            priority: null,
            scheduledAt: null,
          }),
          null,
          `deadLetters.replay("${id}") must return null`,
        );
      }
    },
  }),
];
