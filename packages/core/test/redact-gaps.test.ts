/** Issue 43, "Redaction gaps": key case, `dedupKey` and dead-letter `tags`, and webhook endpoint URLs. */
import { describe, expect, it } from "vitest";
import { createRedactor, REDACTED, redactOptionProblems } from "../src/observability/redact.js";
import { shownUrl } from "../src/ops/redaction.js";
import { memoryApps } from "./memory.js";

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
