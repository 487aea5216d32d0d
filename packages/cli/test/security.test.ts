/**
 * Issue 25's CLI attacks: a dashboard served to the network with no key, keys only from the environment
 * or a file, and CSV cells a spreadsheet would run.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually } from "@soniq/testkit";
import { describe, expect, it } from "vitest";
import { csvCell } from "../src/commands/dead-letter-export.js";
import { assertSafeExposure, isLoopback, loadKeys, parseKeys } from "../src/dashboard/keys.js";
import { assertBuilt, expectNoRunningChildren, soniqCli, start } from "./cli.js";

const KEY = "0123456789abcdef-key";

describe("soniq dashboard", () => {
  it("security/dashboard-off-loopback: --host 0.0.0.0 without a key is refused before anything is served", async () => {
    assertBuilt();
    const dir = mkdtempSync(join(tmpdir(), "soniq-cli-sec-"));
    const db = `sqlite:${join(dir, "soniq.db")}`;
    const open = await soniqCli(["dashboard", "--host", "0.0.0.0", "--database-url", db], { cwd: dir });
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/^error \[SONIQ_CLI_REFUSED\] refusing to serve the dashboard on 0\.0\.0\.0/);
    expect(open.stderr).toContain("SONIQ_DASHBOARD_KEYS");
    // With a key (or --insecure-open) it goes on to load @soniq/dashboard, absent from this project.
    const keyed = await soniqCli(["dashboard", "--host", "0.0.0.0", "--database-url", db], {
      cwd: dir,
      env: { SONIQ_DASHBOARD_KEYS: `ops:write:${KEY}` },
    });
    expect(keyed.stderr).toMatch(/SONIQ_CLI_MISSING_PACKAGE/);
    const insecure = await soniqCli(
      ["dashboard", "--host", "0.0.0.0", "--insecure-open", "--database-url", db],
      {
        cwd: dir,
      },
    );
    expect(insecure.stderr).toMatch(/SONIQ_CLI_MISSING_PACKAGE/);
    const badKeys = await soniqCli(["dashboard", "--database-url", db], {
      cwd: dir,
      env: { SONIQ_DASHBOARD_KEYS: "ops:admin:short" },
    });
    expect(badKeys.code).toBe(2);
    expect(badKeys.stderr).not.toContain("short");
  });

  it("security/dashboard-serves-keys: the keys from SONIQ_DASHBOARD_KEYS guard the served dashboard", async () => {
    assertBuilt();
    const dir = mkdtempSync(join(tmpdir(), "soniq-cli-sec-"));
    const dashboardPackage = fileURLToPath(new URL("../../dashboard", import.meta.url));
    mkdirSync(join(dir, "node_modules", "@soniq"), { recursive: true });
    symlinkSync(dashboardPackage, join(dir, "node_modules", "@soniq", "dashboard"));
    writeFileSync(join(dir, "package.json"), "{}");
    const db = `sqlite:${join(dir, "soniq.db")}`;
    expect((await soniqCli(["setup", "--database-url", db], { cwd: dir })).code).toBe(0);
    const served = start(["dashboard", "--port", "0", "--database-url", db], {
      cwd: dir,
      env: { SONIQ_DASHBOARD_KEYS: `ops:write:${KEY},viewer:read:${KEY}-read` },
    });
    try {
      const url = await eventually(
        () => {
          const m = /soniq dashboard on (http:\/\/127\.0\.0\.1:\d+)/.exec(served.stdout());
          if (!m?.[1]) throw new Error(`not listening yet: ${served.stderr()}`);
          return m[1];
        },
        { timeoutMs: 20_000 },
      );
      expect(served.stdout()).toContain("2 API key(s)");
      expect((await fetch(`${url}/api/stats`)).status).toBe(401);
      const read = { authorization: `Bearer ${KEY}-read` };
      expect((await fetch(`${url}/api/stats`, { headers: read })).status).toBe(200);
      const pause = await fetch(`${url}/api/queues/default/pause`, { method: "POST", headers: read });
      expect(pause.status).toBe(403);
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
      expectNoRunningChildren();
    }
  });

  it("security/dashboard-redaction: the rule in force is named at start; off loopback without one, a warning", async () => {
    assertBuilt();
    const dir = mkdtempSync(join(tmpdir(), "soniq-cli-sec-"));
    const dashboardPackage = fileURLToPath(new URL("../../dashboard", import.meta.url));
    mkdirSync(join(dir, "node_modules", "@soniq"), { recursive: true });
    symlinkSync(dashboardPackage, join(dir, "node_modules", "@soniq", "dashboard"));
    writeFileSync(join(dir, "package.json"), "{}");
    const db = `sqlite:${join(dir, "soniq.db")}`;
    expect((await soniqCli(["setup", "--database-url", db], { cwd: dir })).code).toBe(0);
    const serve = async (args: string[], env: Record<string, string> = {}) => {
      const served = start(["dashboard", "--port", "0", ...args, "--database-url", db], { cwd: dir, env });
      try {
        await eventually(
          () => {
            if (!/soniq dashboard on http/.test(served.stdout()))
              throw new Error(`not listening yet: ${served.stderr()}`);
          },
          { timeoutMs: 20_000 },
        );
        return served.stderr();
      } finally {
        served.child.kill("SIGTERM");
        await served.exited;
      }
    };
    try {
      const open = await serve(["--host", "0.0.0.0", "--insecure-open"]);
      expect(open).toMatch(/^warning: .*0\.0\.0\.0.*raw args, results and errors/m);
      for (const remedy of ["--redact", "SONIQ_REDACT", "--module", "--no-redact"])
        expect(open, remedy).toContain(remedy);
      const redacted = await serve(["--host", "0.0.0.0", "--insecure-open"], { SONIQ_REDACT: "password" });
      expect(redacted).toContain("redacting paths: password");
      expect(redacted).not.toContain("warning");
      const loopback = await serve([]);
      expect(loopback).toContain("no redaction");
      expect(loopback).not.toContain("warning");
      const raw = await serve(["--host", "0.0.0.0", "--insecure-open", "--no-redact"]);
      expect(raw).toContain("no redaction (--no-redact)");
      expect(raw).not.toContain("warning");
    } finally {
      expectNoRunningChildren();
    }
  });

  it("security/dashboard-keys: label:scope:key entries from SONIQ_DASHBOARD_KEYS or a file", () => {
    expect(parseKeys(`ops:write:${KEY}, viewer:read:${KEY}x`, "env")).toEqual([
      { label: "ops", scope: "write", key: KEY },
      { label: "viewer", scope: "read", key: `${KEY}x` },
    ]);
    const dir = mkdtempSync(join(tmpdir(), "soniq-keys-"));
    const file = join(dir, "keys");
    writeFileSync(file, `# operators\nops:write:${KEY}\n\nviewer:read:${KEY}y\n`);
    expect(loadKeys(file, { SONIQ_DASHBOARD_KEYS: `x:read:${KEY}` }).map((k) => k.label)).toEqual([
      "ops",
      "viewer",
    ]);
    expect(loadKeys(undefined, { SONIQ_DASHBOARD_KEYS: `x:read:${KEY}` })).toHaveLength(1);
    expect(loadKeys(undefined, {})).toEqual([]);
    for (const bad of ["ops:write:short", `ops:${KEY}`, `ops:admin:${KEY}`, `bad label:read:${KEY}`]) {
      expect(() => parseKeys(bad, "env"), bad).toThrow(/not label:scope:key/);
    }
    expect(() => loadKeys(join(dir, "missing"), {})).toThrow(/cannot read --keys-file/);
  });

  it("security/dashboard-loopback: only loopback listens without a key", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"])
      expect(isLoopback(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "ops.internal"])
      expect(isLoopback(host), host).toBe(false);
    expect(() => assertSafeExposure("0.0.0.0", [], false)).toThrow(/--insecure-open/);
    expect(() => assertSafeExposure("0.0.0.0", [], true)).not.toThrow();
    expect(() =>
      assertSafeExposure("0.0.0.0", [{ key: KEY, label: "a", scope: "read" }], false),
    ).not.toThrow();
  });
});

describe("CSV export", () => {
  it("security/csv-formula-cells: cells that begin with = + - @ tab or CR are escaped", () => {
    expect(csvCell('=HYPERLINK("http://evil.example","click")')).toBe(
      `"'=HYPERLINK(""http://evil.example"",""click"")"`,
    );
    expect(csvCell("+1+1")).toBe("'+1+1");
    expect(csvCell("-2+3")).toBe("'-2+3");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\t=1")).toBe("'\t=1");
    expect(csvCell("\r=1")).toBe(`"'\r=1"`);
    expect(csvCell(-5)).toBe("-5");
    expect(csvCell("Error: boom")).toBe("Error: boom");
    expect(csvCell({ to: "=x" })).toBe(`"{""to"":""=x""}"`);
  });
});
