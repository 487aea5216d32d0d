/**
 * Issue 43 (low): what the CLI prints must not leak a connection string's password (in the userinfo, in a
 * `password=` / `sslpassword=` parameter, or in a string WHATWG cannot parse), a webhook header's value, or
 * control characters a stored error carries to the terminal.
 */
import { PermanentError } from "@soniq/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactConnectionString } from "../src/database.js";
import { type Io, Printer, terminalSafe } from "../src/output.js";
import {
  assertBuilt,
  expectNoRunningChildren,
  openApp,
  postgresDb,
  type Result,
  soniqCli,
  sqliteDb,
  type TestDb,
} from "./cli.js";

/** ESC, BEL, C1 CSI (U+009B) and any other C0/C1 control but newline and tab. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for exactly these bytes
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const leaks = (r: Result, secret: string): boolean => r.stdout.includes(secret) || r.stderr.includes(secret);

describe("connection strings in what the CLI prints", () => {
  it("leaks/url-masking: userinfo, password= and sslpassword= parameters, unparseable URLs and key=value strings", () => {
    const cases: [string, string][] = [
      ["postgres://u:hunter2@h:5432/db", "postgres://u:***@h:5432/db"],
      ["postgres://u@h/db?password=hunter2", "postgres://u@h/db?password=***"],
      [
        "postgres://u@h/db?sslmode=require&sslpassword=hunter2&x=1",
        "postgres://u@h/db?sslmode=require&sslpassword=***&x=1",
      ],
      ["postgres://u@h/db?PASSWORD=hun#ter2&x=1", "postgres://u@h/db?PASSWORD=***&x=1"],
      ["postgres://u:p#ss@host/db", "postgres://u:***@host/db"],
      ["postgres://u:p@ss@host/db", "postgres://u:***@host/db"],
      ["postgres://u:5432#ss@host/db", "postgres://u:***@host/db"],
      ["postgresql://u:a/b?c@host/db", "postgresql://u:***@host/db"],
      ["host=x user=u password=secret dbname=d", "host=x user=u password=*** dbname=d"],
      ["host=x password='sec ret' dbname=d", "host=x password=*** dbname=d"],
      ["postgres://u@h/db", "postgres://u@h/db"],
      ["sqlite:./soniq.db", "sqlite:./soniq.db"],
    ];
    for (const [raw, shown] of cases) expect(redactConnectionString(raw), raw).toBe(shown);
  });

  it("leaks/url-in-errors: a refused connection names the database without its password", async () => {
    assertBuilt();
    const dir = sqliteDb().dir;
    for (const [url, secret] of [
      ["postgres://u@127.0.0.1:1/db?password=hunter2", "hunter2"],
      ["postgres://u@127.0.0.1:1/db?sslmode=disable&sslpassword=hunter3", "hunter3"],
      ["postgres://u:p#ss@127.0.0.1:1/db", "p#ss"],
      ["postgres://u:pa@ss@127.0.0.1:1/db", "pa@ss"],
      ["host=127.0.0.1 port=1 password=hunter4", "hunter4"],
    ] as const) {
      for (const args of [
        ["status", "--database-url", url],
        ["status", `--database-url=${url}`],
      ]) {
        const r = await soniqCli(args, { cwd: dir });
        expect(r.code, url).not.toBe(0);
        expect(r.stderr, url).toMatch(/^error \[/);
        expect(leaks(r, secret), `${url}: ${r.stderr}`).toBe(false);
      }
      const viaEnv = await soniqCli(["jobs", "list"], { cwd: dir, env: { SONIQ_DATABASE_URL: url } });
      expect(viaEnv.code, url).not.toBe(0);
      expect(leaks(viaEnv, secret), `${url}: ${viaEnv.stderr}`).toBe(false);
    }
    const refused = await soniqCli(
      ["status", "--database-url", "postgres://u@127.0.0.1:1/db?password=hunter2"],
      { cwd: dir },
    );
    expect(refused.stderr).toContain("cannot connect to postgres://u@127.0.0.1:1/db?password=***");
    expectNoRunningChildren();
  });

  describe("on Postgres", () => {
    let db: TestDb;
    beforeAll(async () => {
      assertBuilt();
      db = postgresDb();
      await db.create();
      const setup = await soniqCli(["setup", "--database-url", db.url], { cwd: db.dir });
      expect(setup.code, setup.stderr).toBe(0);
    });
    afterAll(async () => {
      expectNoRunningChildren();
      await db?.drop();
    });

    it("leaks/url-in-status: status names the database without a password= parameter's value", async () => {
      // Trust authentication: the password is sent but not checked, so the command gets through.
      const url = `${db.url}${db.url.includes("?") ? "&" : "?"}password=hunter2`;
      const r = await soniqCli(["status", "--database-url", url], { cwd: db.dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("password=***");
      expect(leaks(r, "hunter2")).toBe(false);
    });
  });
});

describe("webhooks add --header", () => {
  let db: TestDb;
  const env = {
    SONIQ_SECRET_KEY: "cli-test-secret-key-0123456789abcdef",
    HOOK: "endpoint-signing-secret-cli-0123",
  };
  const add = (...args: string[]): Promise<Result> =>
    soniqCli(
      [
        "webhooks",
        "add",
        "http://127.0.0.1:9/hook",
        "--events",
        "job.dead_letter",
        "--secret-env",
        "HOOK",
        "--allow-private-networks",
        "--database-url",
        db.url,
        ...args,
      ],
      { cwd: db.dir, env },
    );
  beforeAll(async () => {
    assertBuilt();
    db = sqliteDb();
    const setup = await soniqCli(["setup", "--database-url", db.url], { cwd: db.dir });
    expect(setup.code, setup.stderr).toBe(0);
  });
  afterAll(async () => {
    expectNoRunningChildren();
    await db?.drop();
  });

  it("leaks/header-values: Name=value and Name: value are stored, printed as names with [hidden] values", async () => {
    const human = await add("--header", "Authorization=Bearer secret123");
    expect(human.code, human.stderr).toBe(0);
    expect(leaks(human, "secret123")).toBe(false);
    expect(human.stdout).toContain("Authorization: [hidden]");
    const asJson = await add("--header", "X-Token: secret456", "--json");
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(leaks(asJson, "secret456")).toBe(false);
    const endpoint = JSON.parse(asJson.stdout) as { id: string; headers: Record<string, string> };
    expect(endpoint.headers).toEqual({ "X-Token": "[hidden]" });
    const app = await openApp(db, true, { webhooks: { secretKey: env.SONIQ_SECRET_KEY } });
    try {
      expect((await app.webhooks.get(endpoint.id))?.headers).toEqual({ "X-Token": "secret456" });
    } finally {
      await app.close();
    }
  });

  it("leaks/header-usage-error: a malformed --header is refused without echoing it", async () => {
    const r = await add("--header", "Bearer secret789");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--header");
    expect(leaks(r, "secret789")).toBe(false);
  });
});

describe("control characters from stored text", () => {
  it("leaks/terminal-safe: C0 (but newline and tab), DEL, C1 and escape sequences become visible escapes", () => {
    expect(terminalSafe("a\u001b]0;pwned\u0007b\u009b2Jc\r\n\td\u007f")).toBe(
      "a\\u{1b}]0;pwned\\u{7}b\\u{9b}2Jc\\u{d}\n\td\\u{7f}",
    );
    expect(terminalSafe("one\ntwo", { newlines: false })).toBe("one\\u{a}two");
  });

  it("leaks/printer-keeps-own-colour: a coloured printer keeps its own styles and escapes the stored ones", () => {
    let written = "";
    const out = {
      isTTY: true,
      write: (s: string) => {
        written += s;
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    const io: Io = { out, err: out, env: { TERM: "xterm" }, now: Date.now };
    const p = new Printer(io);
    expect(p.color).toBe(true);
    p.line(`${p.paint("red", "dead")} \u001b[8mhidden\u001b]0;title\u0007 \u009b2J`);
    expect(written).toContain(p.paint("red", "dead"));
    expect(written).toContain("\\u{1b}[8mhidden\\u{1b}]0;title\\u{7} \\u{9b}2J");
    expect(written.replaceAll(p.paint("red", "dead"), "")).not.toMatch(CONTROL);
    written = "";
    p.json({ e: "\u001b]0;x\u0007\u009b2J\u007f" });
    expect(written).not.toMatch(CONTROL);
    expect(JSON.parse(written)).toEqual({ e: "\u001b]0;x\u0007\u009b2J\u007f" });
  });

  describe("in jobs show", () => {
    let db: TestDb;
    let id: string;
    let deadId: string;
    const EVIL = "boom \u001b]0;pwned\u0007 then \u009b2J gone\r\u001b[8m";
    beforeAll(async () => {
      assertBuilt();
      db = sqliteDb();
      const setup = await soniqCli(["setup", "--database-url", db.url], { cwd: db.dir });
      expect(setup.code, setup.stderr).toBe(0);
      const app = await openApp(db, false);
      try {
        app.job("ctl.fail", async () => {
          throw new PermanentError(EVIL);
        });
        app.job(
          "ctl.retry",
          async () => {
            throw new Error(EVIL);
          },
          { maxAttempts: 3, retry: { backoff: "fixed", delayMs: 3_600_000 } },
        );
        id = (await app.jobs.enqueue("ctl.retry", { note: "arg \u001b[2J" }, { queue: "ctl" })).id;
        deadId = (await app.jobs.enqueue("ctl.fail", { note: "arg \u001b[2J" }, { queue: "ctl" })).id;
        await app.worker({ queues: ["ctl"] }).runOnce();
        expect((await app.jobs.get(id))?.lastError).toContain("\u001b]0;pwned\u0007");
        expect((await app.deadLetters.get(deadId))?.lastError).toContain("\u001b]0;pwned\u0007");
      } finally {
        await app.close();
      }
    });
    afterAll(async () => {
      expectNoRunningChildren();
      await db?.drop();
    });

    it("leaks/control-in-show: the human output carries no ESC, BEL or CSI; --json escapes them", async () => {
      for (const args of [
        ["jobs", "show", id],
        ["dead-letter", "show", deadId],
        ["dead-letter", "list"],
        ["jobs", "list"],
      ]) {
        const r = await soniqCli([...args, "--database-url", db.url], { cwd: db.dir });
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
        expect(r.stdout, args.join(" ")).not.toMatch(CONTROL);
        expect(r.stderr, args.join(" ")).not.toMatch(CONTROL);
      }
      const shown = await soniqCli(["jobs", "show", id, "--database-url", db.url], { cwd: db.dir });
      expect(shown.stdout).toContain("\\u{1b}]0;pwned\\u{7}");
      const asJson = await soniqCli(["jobs", "show", id, "--json", "--database-url", db.url], {
        cwd: db.dir,
      });
      expect(asJson.stdout).not.toMatch(CONTROL);
      expect((JSON.parse(asJson.stdout) as { lastError: string }).lastError).toContain(EVIL);
    });
  });
});
