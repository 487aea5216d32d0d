/** The options types are derived from the option tables: what users write and what core resolves. */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type {
  EnqueueOptions,
  JobOptions,
  ResolvedJobOptions,
  ResolvedSoniqOptions,
  SoniqOptions,
} from "../src/app/options.js";
import type { Clock } from "../src/common/clock.js";
import type { Logger } from "../src/common/logger.js";
import type { Backend } from "../src/contract/index.js";
import type { RetryPolicy } from "../src/jobs/retry-policy.js";
import type { ResolvedWorkerOptions, WorkerOptions } from "../src/worker/options.js";

describe("core/options-types", () => {
  it("core/options-types-given: every option optional as users write it, the generic ones typed by the caller", () => {
    type Memory = Backend<{ memory: true }>;
    expectTypeOf<SoniqOptions<Memory>["backend"]>().toEqualTypeOf<Memory>();
    expectTypeOf<SoniqOptions["logger"]>().toEqualTypeOf<Logger | undefined>();
    expectTypeOf<SoniqOptions["producerId"]>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<{ backend: Memory }>().toExtend<SoniqOptions<Memory>>();
    const schema = z.object({ to: z.string() });
    expectTypeOf<JobOptions<typeof schema>["schema"]>().toEqualTypeOf<typeof schema | undefined>();
    expectTypeOf<JobOptions["retry"]>().toEqualTypeOf<RetryPolicy | undefined>();
    expectTypeOf<EnqueueOptions<{ client: string }>["tx"]>().toEqualTypeOf<{ client: string } | undefined>();
    expectTypeOf<EnqueueOptions["runAt"]>().toEqualTypeOf<Date | undefined>();
    expectTypeOf<WorkerOptions["queues"]>().toEqualTypeOf<readonly string[] | undefined>();
    expectTypeOf<keyof WorkerOptions>().toEqualTypeOf<
      | "queues"
      | "concurrency"
      | "batchSize"
      | "maxBatchSize"
      | "completeBatchSize"
      | "pollIntervalMs"
      | "newerVersionDelayMs"
      | "heartbeatIntervalMs"
      | "staleAfterMs"
      | "deliverWebhooks"
      | "maintenanceIntervalMs"
      | "shutdownTimeoutMs"
      | "metadata"
    >();
  });

  it("core/options-types-resolved: every option present as core resolves it, `backend` left out", () => {
    expectTypeOf<ResolvedSoniqOptions["clock"]>().toEqualTypeOf<Clock>();
    expectTypeOf<ResolvedSoniqOptions>().not.toHaveProperty("backend");
    expectTypeOf<ResolvedJobOptions["schema"]>().toEqualTypeOf<StandardSchemaV1 | undefined>();
    expectTypeOf<ResolvedJobOptions["maxAttempts"]>().toEqualTypeOf<number>();
    expectTypeOf<ResolvedWorkerOptions["queues"]>().toEqualTypeOf<readonly string[] | null>();
    expectTypeOf<ResolvedWorkerOptions["metadata"]>().toEqualTypeOf<Record<string, unknown> | null>();
  });
});
