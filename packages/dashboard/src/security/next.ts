/**
 * Where the login form sends the browser afterwards. `next` is resolved as a URL path first (so
 * `/base/../../evil` and `/base/%2e%2e/evil` become what a browser would fetch) and kept only when the
 * result is on this server and inside `basePath`; anything else goes to the dashboard's home.
 */
const PROBE = "http://soniq.invalid";

export function safeNext(base: string, next: unknown): string {
  const home = `${base}/`;
  if (typeof next !== "string" || !next.startsWith("/") || next.startsWith("//")) return home;
  if (next.length > 2000 || !/^[\x21-\x7e]*$/.test(next) || next.includes("\\")) return home;
  let url: URL;
  try {
    url = new URL(next, PROBE);
  } catch {
    return home;
  }
  if (url.origin !== PROBE) return home;
  if (url.pathname !== home && !url.pathname.startsWith(home)) return home;
  return url.pathname + url.search;
}
