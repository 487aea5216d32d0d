/**
 * `soniq.jobs.upgrade` (DESIGN.md section 20) on every backend, through the public API: old code (version 1)
 * leaves queued jobs and a dead letter behind; the new code (version 2, one upcaster, a schema) rewrites them. A
 * dry run reports and changes nothing; a row the upcaster or the schema refuses is left as it was and reported; a
 * second run finds nothing; the call is audited once; the rewritten jobs then run with no upcast needed.
 */
import { PermanentError, type Soniq } from "@soniq/core";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, matrixHarness } from "./runtime-support.js";

interface MailV1 {
  email: unknown;
  die?: boolean;
}
interface MailV2 {
  to: string;
  die?: boolean;
}

/** Version 2's schema: `to` must be a string. */
const mailV2 = {
  "~standard": {
    version: 1 as const,
    vendor: "e2e",
    validate: (value: unknown) => {
      const v = value as Partial<MailV2> | null;
      return typeof v?.to === "string"
        ? { value: v as MailV2 }
        : { issues: [{ message: "to must be a string", path: ["to"] }] };
    },
  },
};

describe.each(ALL_KINDS.map((make) => [make().name, make] as const))(
  "versions/upgrade on %s",
  (_name, make) => {
    const t = matrixHarness(make);

    it("versions/upgrade: queued jobs and dead letters of version 1 are rewritten to version 2 (dry run first); refused rows stay and are reported", async () => {
      const queue = t.queue;
      const name = `mail.send_${queue}`;
      const deadQueue = `${queue}_dl`;
      const old = await t.app();
      const oldMail = old.job(
        name,
        async (args: MailV1) => {
          if (args.die) throw new PermanentError("bounced");
        },
        { queue, version: 1 },
      );
      const a = await oldMail.enqueue({ email: "a@example.com" });
      const b = await oldMail.enqueue({ email: "b@example.com" });
      const bad = await oldMail.enqueue({ email: 42 });
      const dead = await oldMail.enqueue({ email: "d@example.com", die: true }, { queue: deadQueue });
      await old.worker({ queues: [deadQueue] }).runOnce();
      expect((await old.deadLetters.get(dead.id))?.argsVersion).toBe(1);

      const ran: MailV2[] = [];
      const current: Soniq = await t.app(t.kind.createPeer());
      current.job(
        name,
        async (args) => {
          ran.push(args as MailV2);
        },
        {
          queue,
          version: 2,
          schema: mailV2,
          upcast: { 1: (v1: MailV1) => ({ to: v1.email, ...(v1.die ? { die: true } : {}) }) },
        },
      );

      const dry = await current.jobs.upgrade(name, { dryRun: true, actor: "deploy-bot" });
      expect(dry).toMatchObject({ name, version: 2, jobs: 2, deadLetters: 1, failed: 1, dryRun: true });
      expect(dry.failures).toEqual([
        { id: bad.id, kind: "job", version: 1, error: expect.stringContaining("to must be a string") },
      ]);
      expect((await current.jobs.get(a.id))?.argsVersion, "a dry run writes nothing").toBe(1);

      const progress: [number, number][] = [];
      const done = await current.jobs.upgrade(name, {
        actor: "deploy-bot",
        onProgress: (n, total) => progress.push([n, total]),
      });
      expect(done).toMatchObject({ jobs: 2, deadLetters: 1, failed: 1, dryRun: false });
      expect(progress[0]).toEqual([0, 4]);
      expect(progress.at(-1)).toEqual([4, 4]);
      for (const [id, to] of [
        [a.id, "a@example.com"],
        [b.id, "b@example.com"],
      ] as const) {
        const job = await current.jobs.get(id);
        expect([job?.args, job?.argsVersion, job?.status, job?.attempts]).toEqual([{ to }, 2, "queued", 0]);
      }
      const letter = await current.deadLetters.get(dead.id);
      expect([letter?.args, letter?.argsVersion]).toEqual([{ to: "d@example.com", die: true }, 2]);
      const refused = await current.jobs.get(bad.id);
      expect([refused?.args, refused?.argsVersion], "a refused row keeps its args and version").toEqual([
        { email: 42 },
        1,
      ]);

      const again = await current.jobs.upgrade(name, { actor: "deploy-bot" });
      expect(again).toMatchObject({ jobs: 0, deadLetters: 0, failed: 1 });
      const audit = (await current.audit.list({ action: "job.upgrade", limit: 100 })).filter(
        (r) => r.target === name,
      );
      expect(audit.map((r) => [r.actor, r.outcome, r.params, r.details])).toEqual([
        ["deploy-bot", "ok", { name, version: 2, dryRun: false }, { jobs: 0, deadLetters: 0, failed: 1 }],
        ["deploy-bot", "ok", { name, version: 2, dryRun: false }, { jobs: 2, deadLetters: 1, failed: 1 }],
        ["deploy-bot", "dry_run", { name, version: 2, dryRun: true }, { jobs: 2, deadLetters: 1, failed: 1 }],
      ]);

      await current.worker({ queues: [queue] }).runOnce();
      expect(ran.map((r) => r.to).sort(), "the upgraded jobs run on version 2 as stored").toEqual([
        "a@example.com",
        "b@example.com",
      ]);
      expect((await current.jobs.get(bad.id))?.status ?? "dead letter").toBe("dead letter");
    });

    it("versions/upgrade-bad-input: an undefined name, a bad option or an actor refused with a typed error, nothing written", async () => {
      const soniq = await t.app();
      const name = `mail.bad_${t.queue}`;
      soniq.job(name, async () => {}, { queue: t.queue, version: 2, upcast: { 1: (a: unknown) => a } });
      await expect(soniq.jobs.upgrade(`${name}_missing`)).rejects.toMatchObject({
        code: "SONIQ_UNKNOWN_TASK_NAME",
      });
      await expect(soniq.jobs.upgrade(name, { dryRun: "yes" as unknown as boolean })).rejects.toMatchObject({
        code: "SONIQ_INVALID_ARGUMENT",
      });
      await expect(soniq.jobs.upgrade(name, { actor: "" })).rejects.toMatchObject({
        code: "SONIQ_INVALID_ARGUMENT",
      });
      await expect(
        soniq.jobs.upgrade(name, { bogus: 1 } as unknown as { dryRun: boolean }),
      ).rejects.toMatchObject({ code: "SONIQ_INVALID_OPTIONS" });
      const rows = (await soniq.audit.list({ action: "job.upgrade", limit: 100 })).filter(
        (r) => r.target === name || r.target === `${name}_missing`,
      );
      expect(rows).toEqual([]);
    });
  },
);
