import { describe, expect, expectTypeOf, it } from "vitest";
import type { DeadLetterJob, Job, WorkerInfo } from "../src/common/types.js";
import { JOB_STATUSES } from "../src/schema/constants.js";
import * as pg from "../src/schema/pg.js";
import * as sqlite from "../src/schema/sqlite.js";

describe("schema/types", () => {
  it("both dialects' job rows are exactly core's Job", () => {
    expectTypeOf<typeof pg.soniqJobs.$inferSelect>().toEqualTypeOf<Job>();
    expectTypeOf<typeof sqlite.soniqJobs.$inferSelect>().toEqualTypeOf<Job>();
  });

  it("both dialects' dead-letter rows are exactly core's DeadLetterJob", () => {
    expectTypeOf<typeof pg.soniqDeadLetterJobs.$inferSelect>().toEqualTypeOf<DeadLetterJob>();
    expectTypeOf<typeof sqlite.soniqDeadLetterJobs.$inferSelect>().toEqualTypeOf<DeadLetterJob>();
  });

  it("both dialects' worker rows are exactly core's WorkerInfo", () => {
    expectTypeOf<typeof pg.soniqWorkers.$inferSelect>().toEqualTypeOf<WorkerInfo>();
    expectTypeOf<typeof sqlite.soniqWorkers.$inferSelect>().toEqualTypeOf<WorkerInfo>();
  });

  it("status columns take exactly the four job statuses", () => {
    expect(pg.soniqJobs.status.enumValues).toEqual([...JOB_STATUSES]);
    expect(sqlite.soniqJobs.status.enumValues).toEqual([...JOB_STATUSES]);
  });
});
