/**
 * Issue 43, "Redaction gaps": key case, `dedupKey`, `group` and dead-letter `tags`, webhook endpoint URLs, and
 * validator messages that quote the rejected value.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSoniqError } from "../src/index.js";
import { createRedactor, REDACTED, redactOptionProblems } from "../src/observability/redact.js";
import { shownExplanation, shownRefusal, shownUrl } from "../src/ops/redaction.js";
import { shownRows } from "../src/ops/steps-view.js";
import { memoryApps } from "./memory.js";
import { rejection } from "./support.js";

const app = memoryApps();

describe("redact/case", () => {
  it("redact/case-insensitive: a path matches its keys whatever their case", () => {
    const redact = createRedactor(["**.password", "card.number", "headers.*"]);
    const row = redact.row({
      jobName: "a",
      args: {
        Password: "hunter2-upper",
        nested: { PASSWORD: "hunter2-shout" },
        Card: { Number: "4111111111111111", expiry: "12/29" },
        HEADERS: { Authorization: "Bearer xyz123" },
        user: "ann",
      },
      lastError: "bad hunter2-upper / hunter2-shout / 4111111111111111",
    });
    expect(row.args).toEqual({
      Password: REDACTED,
      nested: { PASSWORD: REDACTED },
      Card: { Number: REDACTED, expiry: "12/29" },
      HEADERS: { Authorization: REDACTED },
      user: "ann",
    });
    expect(row.lastError).toBe(`bad ${REDACTED} / ${REDACTED} / ${REDACTED}`);
  });

  it("redact/case-validation: paths are checked as before", () => {
    expect(redactOptionProblems(["Password", "**.TOKEN"])).toEqual([]);
    expect(redactOptionProblems(["a..b"])).toHaveLength(1);
  });
});

describe("redact/dedup-and-tags", () => {
  it("redact/dedup-key: a dedupKey quoting a redacted value is hidden; other dedupKeys are shown", async () => {
    const soniq = app({ redact: ["email"] });
    const invite = soniq.job("users.invite", async () => null);
    const { id } = await invite.enqueue({ email: "ann@example.com" }, { dedupKey: "invite:ann@example.com" });
    const { id: other } = await invite.enqueue({ email: "bob@example.com" }, { dedupKey: "invite:42" });
    const shown = soniq.options.redact.row(await getJob(soniq, id));
    expect(JSON.stringify(shown)).not.toContain("ann@example.com");
    expect(shown.dedupKey).toBe(REDACTED);
    expect(soniq.options.redact.row(await getJob(soniq, other)).dedupKey).toBe("invite:42");
  });

  it("redact/dead-letter-tags: string values inside tags are scrubbed of redacted values", () => {
    const redact = createRedactor(["token"]);
    const row = redact.row({
      jobName: "a",
      args: { token: "tok_live_secret" },
      tags: { source: "api", note: "sent tok_live_secret", nested: { list: ["tok_live_secret", 3] } },
    });
    expect(row.tags).toEqual({
      source: "api",
      note: `sent ${REDACTED}`,
      nested: { list: [REDACTED, 3] },
    });
  });

  it("redact/function-dedup: with a redact function, a value it hid is scrubbed from dedupKey and tags too", () => {
    const redact = createRedactor((value, { field }) =>
      field === "args" ? { ...(value as object), card: "****" } : value,
    );
    const row = redact.row({
      jobName: "a",
      args: { card: "4111111111111111", user: "ann" },
      dedupKey: "charge:4111111111111111",
      tags: { card: "4111111111111111", user: "ann" },
    });
    expect(JSON.stringify(row)).not.toContain("4111111111111111");
    expect(row.dedupKey).toBe(REDACTED);
    expect(row.tags).toEqual({ card: REDACTED, user: "ann" });
  });
});

describe("redact/group", () => {
  it("redact/group: a group quoting a redacted value is hidden, as a dedupKey is; other groups are shown", async () => {
    const soniq = app({ redact: ["email"] });
    const invite = soniq.job("users.invite", async () => null);
    const { id } = await invite.enqueue({ email: "ann@example.com" }, { group: "tenant:ann@example.com" });
    const { id: other } = await invite.enqueue({ email: "bob@example.com" }, { group: "tenant-42" });
    const shown = soniq.options.redact.row(await getJob(soniq, id));
    expect(JSON.stringify(shown)).not.toContain("ann@example.com");
    expect(shown.group).toBe(REDACTED);
    expect(soniq.options.redact.row(await getJob(soniq, other)).group).toBe("tenant-42");
  });

  it("redact/function-group: with a redact function, a group quoting a value it hid is hidden", () => {
    const redact = createRedactor((value, { field }) =>
      field === "args" ? { ...(value as object), card: "****" } : value,
    );
    const row = redact.row({
      jobName: "a",
      args: { card: "4111111111111111" },
      group: "card-4111111111111111",
    });
    expect(row.group).toBe(REDACTED);
    expect(redact.row({ jobName: "a", args: { card: "4111111111111111" }, group: "eu" }).group).toBe("eu");
  });

  it("redact/explain-group: explain's group_concurrency_full quotes the group in its message and evidence; both are hidden when the row's group is", () => {
    const redact = createRedactor(["email"]);
    const row = {
      jobName: "users.invite",
      args: { email: "ann@example.com" },
      group: "tenant:ann@example.com",
    };
    const explanation = {
      status: "queued" as const,
      verdict: "blocked" as const,
      reasons: [
        {
          code: "group_concurrency_full" as const,
          message: 'All 1 slots of group "tenant:ann@example.com" are taken.',
          evidence: { group: "tenant:ann@example.com", groupConcurrency: 1, processing: 1 },
        },
      ],
    };
    const shown = shownExplanation(redact, explanation as never, row);
    expect(JSON.stringify(shown)).not.toContain("ann@example.com");
    expect(shown.reasons[0]?.evidence.group).toBe(REDACTED);
    expect(shown.reasons[0]?.message).toBe(`All 1 slots of group "${REDACTED}" are taken.`);
    // A group redact does not hide is shown as stored; with no row at hand the group is withheld (fail closed).
    const plain = { ...row, group: "tenant-42" };
    const quoting = {
      ...explanation,
      reasons: [{ ...explanation.reasons[0], message: "m", evidence: { group: "tenant-42" } }],
    };
    expect(shownExplanation(redact, quoting as never, plain).reasons[0]?.evidence.group).toBe("tenant-42");
    expect(shownExplanation(redact, quoting as never, null).reasons[0]?.evidence.group).toBe(REDACTED);
  });
});

describe("redact/validator-messages", () => {
  /** A zod schema whose message quotes the rejected value, as custom messages often do. */
  const schema = z.object({
    email: z
      .string()
      .refine((v) => v.endsWith(".org"), { error: (issue) => `"${String(issue.input)}" is not allowed` }),
    plan: z.enum(["free", "pro"]),
  });

  it("redact/validator-message: an args refusal shown to an operator keeps its code, name and paths, not the quoted values", async () => {
    for (const redacting of [false, true]) {
      const soniq = app(redacting ? { redact: ["email"] } : {});
      soniq.job("users.invite", async () => null, { schema });
      const err = await rejection(
        soniq.jobs.enqueue("users.invite", { email: "ann@example.com", plan: "zz-secret-plan" }),
      );
      expect(isSoniqError(err, "SONIQ_TASK_ARGS_INVALID")).toBe(true);
      // The app's own call gets the validator's words; only what a surface shows changes.
      expect((err as Error).message).toContain("ann@example.com");
      const shown = shownRefusal(soniq.options.redact, err);
      if (!redacting) {
        expect(shown).toBe(err);
        continue;
      }
      expect(isSoniqError(shown, "SONIQ_TASK_ARGS_INVALID")).toBe(true);
      const text = `${(shown as Error).message} ${JSON.stringify((shown as { context: unknown }).context)}`;
      expect(text).not.toContain("ann@example.com");
      expect(text).not.toContain("zz-secret-plan");
      expect((shown as Error).message).toContain('"users.invite"');
      expect((shown as Error).message).toMatch(/email: .*; plan: /);
      expect((shown as { context: { issues: unknown } }).context.issues).toEqual([
        { path: ["email"], message: REDACTED },
        { path: ["plan"], message: REDACTED },
      ]);
    }
  });

  it("redact/validator-message-other-errors: other errors, and errors that quote no validator message, pass unchanged", () => {
    const redact = createRedactor(["email"]);
    const other = new Error("boom");
    expect(shownRefusal(redact, other)).toBe(other);
    expect(shownRefusal(redact, "text")).toBe("text");
  });
});

describe("redact/endpoint-urls", () => {
  const url = "https://hooks.example.com/services/T0000/B0000/abcdefghijklmnopqrstuvwx?token=s3cret";

  it("redact/shown-url: query values and token-like path segments are hidden; scheme, host, port and the rest stay", () => {
    const shown = shownUrl(url);
    expect(shown).not.toContain("abcdefghijklmnopqrstuvwx");
    expect(shown).not.toContain("s3cret");
    expect(shown).toBe(`https://hooks.example.com/services/T0000/B0000/${REDACTED}?token=${REDACTED}`);
    expect(shownUrl("http://127.0.0.1:8080/hooks")).toBe("http://127.0.0.1:8080/hooks");
    expect(shownUrl("https://h.example.com:8443/a/b?x=1&y")).toBe(
      `https://h.example.com:8443/a/b?x=${REDACTED}&y`,
    );
    expect(shownUrl("not a url with abcdefghijklmnopqrstuvwx")).toBe(REDACTED);
  });

  it("redact/endpoint-audit: the audit params of register and update never carry the URL's tokens; the stored URL is whole", async () => {
    const soniq = app({ webhooks: { secretKey: "unit-test-key-0123456789", allowPrivateNetworks: true } });
    const endpoint = await soniq.webhooks.register({
      url,
      events: ["job.failed"],
      secret: "whsec_0123456789abcdef",
    });
    await soniq.webhooks.update(endpoint.id, { url: `${url}&more=other-secret` });
    const audit = JSON.stringify(await soniq.audit.list());
    expect(audit).toContain("hooks.example.com");
    for (const secret of ["abcdefghijklmnopqrstuvwx", "s3cret", "other-secret"])
      expect(audit).not.toContain(secret);
    expect((await soniq.webhooks.get(endpoint.id))?.url).toBe(`${url}&more=other-secret`);
  });
});

async function getJob(soniq: ReturnType<typeof app>, id: string) {
  const job = await soniq.jobs.get(id);
  if (job === null) throw new Error(`no job ${id}`);
  return job;
}

describe("redact/list-steps", () => {
  it("redact/list-last-error-quotes-step: a list's last error is scrubbed of a value redact hid of the row's steps", async () => {
    const soniq = app({ redact: ["**.token"] });
    const charge = soniq.job(
      "pay.charge",
      async (_args: { order: string }, ctx) => {
        const card = await ctx.step("tokenise", () => ({ token: "tok_live_4242abcd" }));
        throw new Error(`charge with ${card.token} declined`);
      },
      { maxAttempts: 2 },
    );
    const plain = soniq.job("pay.plain", async () => {
      throw new Error("plain failure tok_live_4242abcd");
    });
    await soniq.setup();
    const { id } = await charge.enqueue({ order: "o-1" });
    const other = await plain.enqueue({});
    await soniq.worker().runOnce();
    const raw = await soniq.jobs.get(id);
    expect(raw?.lastError).toContain("tok_live_4242abcd");
    // What every list showed before: redact.row knows the row, not its steps.
    expect(soniq.options.redact.row(raw as NonNullable<typeof raw>).lastError).toContain("tok_live_4242abcd");
    const rows = await shownRows(soniq, await soniq.jobs.list({ ids: [id, other.id] }));
    const shown = rows.find((r) => r.id === id);
    expect(shown?.lastError).toContain(`charge with ${REDACTED} declined`);
    expect(shown?.lastError).not.toContain("tok_live_4242abcd");
    // Another row is scrubbed of its own steps' values only (it has none): its error is shown as redact shows it.
    expect(rows.find((r) => r.id === other.id)?.lastError).toContain("plain failure tok_live_4242abcd");
    // Without a redact rule the rows are shown as stored, and no step is read.
    const open = app();
    expect(await shownRows(open, [raw as NonNullable<typeof raw>])).toEqual([raw]);
  });
});
