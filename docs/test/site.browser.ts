/**
 * The built site (docs/.vitepress/dist, from `pnpm docs:build`) in Debian's chromium through playwright-core, as the
 * dashboard's browser tests drive it (never a browser download): a small static server on a free port serves it the
 * way a static host does (clean URLs), and the test opens every page, following every internal link from the home
 * page. It fails on a page or asset that does not load, a link to a page or an anchor that does not exist, a page
 * the links never reach, and any console error; it checks that the local search finds "dead letter", and takes a
 * screenshot of the home page and of one guide (into docs/screenshots with UPDATE_SCREENSHOTS=1, else a temporary
 * folder, so a run leaves the work tree clean). Run by `pnpm test:docs` (vitest.site.config.ts), never skipped.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

const docs = fileURLToPath(new URL("..", import.meta.url));
const dist = join(docs, ".vitepress", "dist");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? join(docs, "screenshots")
    : mkdtempSync(join(tmpdir(), "soniq-docs-shots-"));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

/** The file a static host serves for a URL path, with VitePress's clean URLs (`/guide/cli` is `guide/cli.html`). */
function fileFor(pathname: string): string | null {
  const path = normalize(decodeURIComponent(pathname)).replace(/^(\.\.[/\\])+/, "");
  for (const candidate of [path, `${path}.html`, join(path, "index.html")]) {
    const file = join(dist, candidate);
    if (file.startsWith(dist) && existsSync(file) && statSync(file).isFile()) return file;
  }
  return null;
}

/** Every page the build wrote, as the clean URL a reader opens (`/`, `/guide/cli`, `/api/`). */
function builtPages(dir = dist): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "assets") found.push(...builtPages(path));
    else if (entry.name.endsWith(".html") && entry.name !== "404.html") {
      const url = `/${relative(dist, path).replace(/\.html$/, "")}`;
      found.push(url.endsWith("/index") ? url.slice(0, -"index".length) : url);
    }
  }
  return found;
}

describe("docs/site", () => {
  let server: Server;
  let origin: string;
  let browser: Browser;
  /** The current test's console errors, page errors and failed loads, by page; every test ends with none. */
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(dist, "index.html")))
      throw new Error(
        `no built site at ${dist}: run \`pnpm docs:build\` first (\`pnpm test:docs\` does both)`,
      );
    if (!existsSync(CHROMIUM))
      throw new Error(
        `no browser at ${CHROMIUM}: install Debian's chromium (sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary`,
      );
    mkdirSync(SHOTS, { recursive: true });
    server = createServer((req, res) => {
      const file = fileFor(new URL(req.url ?? "/", "http://x").pathname);
      if (!file) {
        res.writeHead(404, { "content-type": TYPES[".html"] });
        res.end(readFileSync(join(dist, "404.html")));
        return;
      }
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(readFileSync(file));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

  beforeEach(() => {
    problems.length = 0;
  });

  afterAll(async () => {
    await browser?.close();
    // A beforeAll that threw before the server listened leaves none to close.
    if (server) await new Promise((resolve) => server.close(resolve));
  });

  async function open(path: string): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 1366, height: 900 },
      colorScheme: "light",
    });
    // Offline, as the site must work: any request off this server is a failure.
    await context.route(
      (url) => !url.href.startsWith(origin),
      (route) => {
        problems.push(`${path}: requested ${route.request().url()} off the site`);
        return route.abort();
      },
    );
    const page = await context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`${path}: console error: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`${path}: uncaught: ${error.message}`));
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${path}: ${response.status()} for ${response.url()}`);
    });
    const response = await page.goto(`${origin}${path}`, { waitUntil: "load" });
    if (response?.status() !== 200) problems.push(`${path}: answered ${response?.status()}`);
    return page;
  }

  /** Chromium aborts the loads in flight when the machine's network changes (a CI stage beside this one may create
   * network namespaces): such an abort says nothing of the site, so the page is opened again, as a reader would
   * reload, at most three times, when that abort is all that went wrong. */
  const changed = (text: string) => text.includes("net::ERR_NETWORK_CHANGED");

  /** `use` on the page at `path` in a context of its own, opened again when only a network change got in its way. */
  async function again<T>(path: string, use: (page: Page) => Promise<T>, tries = 3): Promise<T> {
    const before = problems.length;
    let page: Page | undefined;
    try {
      page = await open(path);
      const result = await use(page);
      const mine = problems.slice(before);
      if (tries > 1 && mine.length > 0 && mine.every(changed)) throw new Error("net::ERR_NETWORK_CHANGED");
      return result;
    } catch (err) {
      const mine = problems.slice(before);
      if (tries > 1 && (changed(String(err)) || (mine.length > 0 && mine.every(changed)))) {
        problems.length = before;
        return again(path, use, tries - 1);
      }
      throw err;
    } finally {
      await page?.context().close();
    }
  }

  it("docs/site-every-page: every page loads without an error, and every internal link and anchor exists", async () => {
    const queue = ["/"];
    const visited = new Set<string>();
    const ids = new Map<string, Set<string>>();
    const anchors: { from: string; page: string; id: string }[] = [];
    async function visit(path: string, tries = 3): Promise<void> {
      const before = problems.length;
      const page = await open(path).catch((err: unknown) => {
        if (tries > 1 && changed(String(err))) return null;
        throw err;
      });
      if (page === null) {
        problems.length = before;
        return visit(path, tries - 1);
      }
      // The page's own script rendered (hydration): the sidebar or the home page's hero is there.
      const rendered = await page.waitForSelector(".VPContent", { timeout: 10_000 }).then(
        () => null,
        (err: unknown) => err,
      );
      // Loads Chromium aborted for a network change, and only those, are tried again (`changed`, above).
      const mine = problems.slice(before);
      if (tries > 1 && mine.length > 0 && mine.every(changed)) {
        await page.context().close();
        problems.length = before;
        return visit(path, tries - 1);
      }
      if (rendered !== null) throw rendered;
      const found = await page.evaluate(() => {
        const d = (globalThis as unknown as { document: InPageDocument }).document;
        return {
          links: [...d.querySelectorAll("a[href]")].map((a) => a.href),
          ids: [...d.querySelectorAll("[id]")].map((e) => e.id),
          images: [...d.querySelectorAll("img")].map((i) => ({
            src: i.src,
            ok: i.complete && i.naturalWidth > 0,
          })),
        };
      });
      await page.context().close();
      ids.set(path, new Set(found.ids));
      for (const image of found.images)
        if (!image.ok) problems.push(`${path}: image ${image.src} did not load`);
      for (const href of found.links) {
        const url = new URL(href);
        if (url.origin !== origin) continue;
        const target = url.pathname.replace(/\.html$/, "");
        if (!fileFor(target)) {
          problems.push(`${path}: broken link to ${url.pathname}`);
          continue;
        }
        if (url.hash.length > 1)
          anchors.push({ from: path, page: target, id: decodeURIComponent(url.hash.slice(1)) });
        if (!visited.has(target) && !/\.[a-z0-9]+$/.test(target)) queue.push(target);
      }
    }
    // Four pages at a time: each waits mostly on the browser's rendering, and the site is about 40 pages.
    while (queue.length > 0) {
      const waiting = [...new Set(queue.splice(0))].filter((p) => !visited.has(p));
      const batch = waiting.slice(0, 4);
      queue.push(...waiting.slice(4));
      for (const path of batch) visited.add(path);
      await Promise.all(batch.map(visit));
    }
    for (const { from, page, id } of anchors) {
      if (!ids.get(page)?.has(id)) problems.push(`${from}: link to ${page}#${id}, which has no such anchor`);
    }
    expect(problems).toEqual([]);
    // Every page the build wrote is reachable from the home page by its links.
    expect(builtPages().filter((p) => !visited.has(p))).toEqual([]);
    expect(visited.size).toBeGreaterThan(30);
    // Every page in one test: 40-110 s alone, over 120 s once on a 2-core CI machine running the scale suite beside
    // it; in CI it runs beside `pnpm test`. The limit only keeps a hung browser from holding CI.
  }, 600_000);

  it("docs/site-search: the local search finds the dead-letter guide", async () => {
    const titles = await again("/", async (page) => {
      await page.click(".DocSearch-Button");
      await page.fill(".VPLocalSearchBox .search-input", "dead letter");
      const first = page.locator(".VPLocalSearchBox .results .result").first();
      await first.waitFor({ timeout: 10_000 });
      return page.locator(".VPLocalSearchBox .results .result .titles").allInnerTexts();
    });
    expect(titles.some((t) => /Dead letters/.test(t))).toBe(true);
    expect(problems).toEqual([]);
  }, 90_000);

  it("docs/site-screenshots: the home page and the dead-letters guide", async () => {
    for (const [path, name] of [
      ["/", "home.png"],
      ["/guide/dead-letters", "guide-dead-letters.png"],
    ] as const) {
      await again(path, async (page) => {
        await page.waitForSelector(".VPContent");
        await page.screenshot({ path: join(SHOTS, name) });
      });
    }
    expect(problems).toEqual([]);
  }, 90_000);
});

/** The few DOM members the in-page callback uses (the repo compiles without the DOM lib). */
interface InPageDocument {
  querySelectorAll(selector: string): Iterable<{
    href: string;
    id: string;
    src: string;
    complete: boolean;
    naturalWidth: number;
  }>;
}
