/**
 * Chromium for the dashboard's browser tests: Debian's chromium driven by playwright-core (never a browser
 * download; .ci/run installs chromium with apt when it is missing), one browser per test file, a fresh context
 * per page, and no uncaught exception in any page's script (checked after every test).
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";

/** The few DOM members the in-page callbacks use (the repo compiles without the DOM lib). */
export interface InPage {
  document: {
    activeElement: { className: string } | null;
    querySelector(
      selector: string,
    ): { textContent: string | null; getAttribute(name: string): string | null } | null;
  };
}

/**
 * The screenshots (shown by the README and docs/reference/dashboard.md) are rewritten only when asked (`UPDATE_SCREENSHOTS=1`), so a test run leaves the
 * work tree clean; otherwise they are still taken, into a temporary folder.
 */
export const DOCS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? fileURLToPath(new URL("../docs/", import.meta.url))
    : `${mkdtempSync(join(tmpdir(), "soniq-dashboard-shots-"))}/`;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface Chromium {
  /** A page in a fresh context (1366 x 900, light scheme). */
  newPage(): Promise<Page>;
  /** A page logged in to the dashboard at `base` with `key`. */
  loggedIn(key: string, base: string): Promise<Page>;
}

/** Call at a test file's top level: launches chromium before the file's tests and closes it after. */
export function useChromium(): Chromium {
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  /** Uncaught exceptions in the pages' script; every test ends with none. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `no browser at ${CHROMIUM}: install Debian's chromium (sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary`,
      );
    mkdirSync(DOCS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
      ],
    });
  }, 60_000);

  afterEach(() => {
    expect(pageErrors).toEqual([]);
  });

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 1366, height: 900 },
      colorScheme: "light",
    });
    contexts.push(context);
    const page = await context.newPage();
    page.on("pageerror", (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    return page;
  }

  async function loggedIn(key: string, base: string): Promise<Page> {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.fill("#key", key);
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")]);
    return page;
  }

  return { newPage, loggedIn };
}
