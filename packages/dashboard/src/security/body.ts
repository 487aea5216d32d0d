/**
 * Request bodies, read with a cap and checked strictly. A body larger than its cap is refused with 413
 * before it is read whole: a declared `Content-Length` over the cap is refused unread, and a streamed body
 * is read chunk by chunk and abandoned as soon as it passes the cap. A JSON body is then checked against
 * the keys its route accepts, at every level: an unknown key is a 400 that names it, so a typo such as
 * `dry_run` or a filter outside `filter` can never widen what a write does.
 */
import { badRequest, DashboardError } from "../errors.js";

/** Every JSON body of the API. */
export const JSON_BODY_LIMIT = 1024 * 1024;
/** The login form: a key and a `next` path. */
export const FORM_BODY_LIMIT = 8 * 1024;

function tooLarge(limit: number): DashboardError {
  const size = limit >= 1024 * 1024 ? `${limit / (1024 * 1024)} MiB` : `${limit / 1024} KiB`;
  return new DashboardError("payload_too_large", `The request body is larger than ${size}.`, { limit });
}

/** The body as text, or 413 once it passes `limit` bytes (nothing past the cap is read). */
export async function readBodyText(req: Request, limit: number): Promise<string> {
  const declared = req.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit);
  if (req.body === null) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(all);
  } catch {
    throw badRequest("The request body is not valid UTF-8");
  }
}

/**
 * The keys a JSON object may hold: `true` for a value the route checks itself, a nested shape for an
 * object (null is allowed where an object is, e.g. `rateLimit: null` clears a limit).
 */
export interface BodyShape {
  readonly [key: string]: true | BodyShape;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkShape(value: Record<string, unknown>, shape: BodyShape, path: string): void {
  const unknown = Object.keys(value).filter((k) => !Object.hasOwn(shape, k));
  if (unknown.length > 0) {
    const names = unknown.map((k) => `${path}${k}`.slice(0, 80)).join(", ");
    const allowed = Object.keys(shape).map((k) => `${path}${k}`);
    throw badRequest(
      `Unknown key${unknown.length > 1 ? "s" : ""} in the request body: ${names}. ` +
        (allowed.length > 0 ? `Allowed: ${allowed.join(", ")}.` : "This request takes no body."),
      { unknownKeys: unknown.slice(0, 20) },
    );
  }
  for (const [key, rule] of Object.entries(shape)) {
    const inner = value[key];
    if (rule === true || inner === undefined || inner === null) continue;
    if (!isObject(inner)) throw badRequest(`${path}${key} must be an object`);
    checkShape(inner, rule, `${path}${key}.`);
  }
}

/** A JSON object of at most 1 MiB holding only the keys of `shape`; an empty body is `{}`. */
export async function readJsonBody(req: Request, shape: BodyShape): Promise<Record<string, unknown>> {
  const text = await readBodyText(req, JSON_BODY_LIMIT);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("The request body is not valid JSON");
  }
  if (!isObject(value)) throw badRequest("The request body must be a JSON object");
  checkShape(value, shape, "");
  return value;
}

/** The login form's fields (at most 8 KiB, urlencoded or multipart-free). */
export async function readForm(req: Request): Promise<Record<string, string>> {
  const text = await readBodyText(req, FORM_BODY_LIMIT);
  const type = req.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    throw badRequest("The login form is sent as application/x-www-form-urlencoded");
  }
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) if (!(k in out)) out[k] = v;
  return out;
}
