/**
 * `soniq webhooks list | add | remove | deliveries | redeliver | test | reseal`, on core's `soniq.webhooks`.
 * The CLI's own instance takes the secrets' encryption key from SONIQ_SECRET_KEY, or a keyring from
 * SONIQ_SECRET_KEYS and SONIQ_SECRET_KEY_ID (core reads no env; `secretKeyFromEnv`); an app given with
 * `--module` keeps its own `webhooks` options. Secrets and keys are never printed, and neither are the values of
 * an endpoint's extra headers (they often carry a token): only their names.
 */
import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENTS,
  type WebhookDeliveryStatus,
  type WebhookOptions,
  type WebhookRegistration,
} from "@soniq/core";
import { shownDelivery, shownUrl } from "@soniq/core/ops";
import { type Command, Option } from "commander";
import { type AppOptions, Context } from "../context.js";
import { CliError, usage } from "../errors.js";
import type { Io } from "../output.js";
import { durationMs, list, positiveInt } from "../parse.js";
import { deliveriesTable, endpointsTable, shownEndpoint } from "../webhook-views.js";

/** The environment variable the CLI reads the secrets' encryption key from. */
export const SECRET_KEY_ENV = "SONIQ_SECRET_KEY";
/** A keyring instead: `id:key,id:key`, and the id of the current key (new secrets are sealed under it). */
export const SECRET_KEYS_ENV = "SONIQ_SECRET_KEYS";
export const SECRET_KEY_ID_ENV = "SONIQ_SECRET_KEY_ID";

type SecretKey = NonNullable<WebhookOptions["secretKey"]>;

/** A keyring's key id: letters, digits, `_` or `-` (core's rule, said here in the variable's words). */
const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The secrets' key as the environment gives it, undefined when it gives none: SONIQ_SECRET_KEY (one key), or
 * SONIQ_SECRET_KEYS, a keyring `id:key,id:key` (split at each comma, empty entries dropped, then at the first
 * colon; a key holds no comma) with SONIQ_SECRET_KEY_ID naming the current key (it may be left out when there is
 * one). Both at once, or a malformed value, is a usage error; no message quotes a key.
 */
export function secretKeyFromEnv(env: NodeJS.ProcessEnv): SecretKey | undefined {
  const single = env[SECRET_KEY_ENV] || undefined;
  const ring = env[SECRET_KEYS_ENV] || undefined;
  if (single !== undefined && ring !== undefined)
    throw usage(
      `set ${SECRET_KEY_ENV} or ${SECRET_KEYS_ENV}, not both (a keyring holds every key, the old one too).`,
    );
  if (single !== undefined) {
    if (single.length < 16)
      throw usage(`${SECRET_KEY_ENV} is too short: the key must have at least 16 characters.`);
    return single;
  }
  if (ring === undefined) {
    if (env[SECRET_KEY_ID_ENV]) throw usage(`${SECRET_KEY_ID_ENV} is set without ${SECRET_KEYS_ENV}.`);
    return undefined;
  }
  const keys: Record<string, string> = {};
  const entries = ring.split(",").filter((entry) => entry.trim() !== ""); // a trailing comma is no entry
  if (entries.length === 0) throw usage(`${SECRET_KEYS_ENV} holds no id:key entry.`);
  for (const [i, entry] of entries.entries()) {
    const at = entry.indexOf(":");
    const id = at < 0 ? "" : entry.slice(0, at).trim();
    const key = at < 0 ? "" : entry.slice(at + 1).trim();
    if (!KEY_ID.test(id))
      throw usage(
        `${SECRET_KEYS_ENV} entry ${i + 1} must be id:key, the id of 1 to 64 letters, digits, _ or - (entries are comma-separated; the value is not shown here).`,
      );
    if (key.length < 16)
      throw usage(`${SECRET_KEYS_ENV}: the key of "${id}" must have at least 16 characters.`);
    if (Object.hasOwn(keys, id)) throw usage(`${SECRET_KEYS_ENV} names the key "${id}" twice.`);
    keys[id] = key;
  }
  const ids = Object.keys(keys);
  const current = env[SECRET_KEY_ID_ENV] || (ids.length === 1 ? ids[0] : undefined);
  if (current === undefined)
    throw usage(
      `${SECRET_KEYS_ENV} holds ${ids.length} keys: set ${SECRET_KEY_ID_ENV} to the current one (${ids.join(", ")}).`,
    );
  if (!Object.hasOwn(keys, current))
    throw usage(`${SECRET_KEY_ID_ENV} must name a key of ${SECRET_KEYS_ENV} (${ids.join(", ")}).`);
  return { current, keys };
}

const endpointNotFound = (id: string) =>
  new CliError("SONIQ_CLI_NOT_FOUND", `no webhook endpoint with id ${id}. See soniq webhooks list.`);

const deliveryNotFound = (ids: string[]) =>
  new CliError(
    "SONIQ_CLI_NOT_FOUND",
    `no webhook delivery with id ${ids.join(", ")}. See soniq webhooks deliveries. Nothing was changed.`,
  );

interface PrivateFlag {
  allowPrivateNetworks?: boolean;
}

/**
 * The CLI's own instance's webhook options: the key (or keyring) from the environment, and private targets when
 * asked. With `--module` the app's options apply, so a flag that would change them is a usage error.
 */
function webhookApp(ctx: Context, o: PrivateFlag, needsKey: boolean): AppOptions {
  if (ctx.module) {
    if (o.allowPrivateNetworks)
      throw usage(
        `--allow-private-networks does not apply with --module: set webhooks.allowPrivateNetworks in ${ctx.module}.`,
      );
    return {};
  }
  const secretKey = secretKeyFromEnv(ctx.io.env);
  if (needsKey && secretKey === undefined)
    throw usage(
      `${SECRET_KEY_ENV} is not set: endpoint secrets are encrypted with it. Set it to the key your workers use ` +
        `(at least 16 characters; a keyring: ${SECRET_KEYS_ENV} and ${SECRET_KEY_ID_ENV}), or pass --module with your app.`,
    );
  const webhooks: WebhookOptions = {
    ...(secretKey === undefined ? {} : { secretKey }),
    ...(o.allowPrivateNetworks ? { allowPrivateNetworks: true } : {}),
  };
  return { webhooks };
}

const PRIVATE_HELP =
  "allow a target on a loopback or private address (the CLI's own instance; with --module, the app's option)";

export function registerWebhooks(program: Command, io: Io): void {
  const webhooks = program
    .command("webhooks")
    .description("webhook endpoints and their deliveries: list, add, remove, redeliver, test, reseal")
    .addHelpText(
      "after",
      `\nThe CLI reads the key endpoint secrets are encrypted with from ${SECRET_KEY_ENV} (the same key your\n` +
        `workers use), or a keyring from ${SECRET_KEYS_ENV}="k1:<old key>,k2:<new key>" with ${SECRET_KEY_ID_ENV}=k2\n` +
        "(the current key). Secrets, keys and header values are never printed.\n\n" +
        "Examples:\n  soniq webhooks add https://ops.example.com/hooks --events job.dead_letter,queue.backlog --secret-env HOOK_SECRET\n" +
        "  soniq webhooks deliveries --status failed\n  soniq webhooks redeliver 0193c6e2-...",
    );
  listCommand(webhooks, io);
  addCommand(webhooks, io);
  removeCommand(webhooks, io);
  deliveriesCommand(webhooks, io);
  redeliverCommand(webhooks, io);
  testCommand(webhooks, io);
  resealCommand(webhooks, io);
}

function listCommand(webhooks: Command, io: Io): void {
  webhooks
    .command("list")
    .description("registered endpoints, oldest first")
    .addHelpText(
      "after",
      "\nJSON (--json): an array of { id, url, events, headers, description, active, maxAttempts, timeoutMs,\n" +
        'retry, hasSecret, createdAt, updatedAt } (header values shown as "[hidden]"; no secret).\n\n' +
        "Examples:\n  soniq webhooks list\n  soniq webhooks list --json",
    )
    .action(async (_o, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp(async (soniq) => (await soniq.webhooks.list()).map(shownEndpoint));
      if (ctx.json) return ctx.printer.json(rows);
      endpointsTable(ctx.printer, rows);
    });
}

/**
 * `--header "Name: value"` (or `Name=value`), repeatable: split at the first `:` or `=`. A malformed one is
 * refused without echoing it (the value is often a token).
 */
function collectHeader(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.search(/[:=]/);
  const name = at > 0 ? value.slice(0, at).trim() : "";
  if (!name || /\s/.test(name))
    throw usage(`--header takes "Name: value" or Name=value (the value is not shown here).`);
  return { ...previous, [name]: value.slice(at + 1).trim() };
}

interface AddFlags extends PrivateFlag {
  events: string[];
  secret?: string;
  secretEnv?: string;
  header?: Record<string, string>;
  maxAttempts?: number;
  timeout?: string;
  description?: string;
}

function secretOf(o: AddFlags, env: NodeJS.ProcessEnv): string {
  if ((o.secret === undefined) === (o.secretEnv === undefined))
    throw usage(
      "pass the signing secret with --secret-env <VAR> (or --secret <value>), exactly one of them.",
    );
  if (o.secret !== undefined) return o.secret;
  const value = env[o.secretEnv as string];
  if (!value) throw usage(`--secret-env ${o.secretEnv}: that environment variable is not set.`);
  return value;
}

function addCommand(webhooks: Command, io: Io): void {
  webhooks
    .command("add")
    .description("register an endpoint: where to POST which events, signed with its secret")
    .argument("<url>", "http(s) URL the events are POSTed to")
    .requiredOption("--events <list>", `comma-separated: ${WEBHOOK_EVENTS.join(", ")}`, list)
    .option("--secret-env <var>", "read the signing secret (16 to 512 characters) from this variable")
    .option(
      "--secret <value>",
      "the signing secret itself (visible to other local users; prefer --secret-env)",
    )
    .option(
      "--header <name:value>",
      'an extra request header, "Name: value" or Name=value (repeatable; the value is never printed)',
      collectHeader,
    )
    .option(
      "--max-attempts <n>",
      "attempts per delivery, the first included (default 5)",
      positiveInt("--max-attempts"),
    )
    .option("--timeout <duration>", "per-attempt time limit, e.g. 10s (default 10s)")
    .option("--description <text>", "a note shown in lists")
    .option("--allow-private-networks", PRIVATE_HELP)
    .addHelpText(
      "after",
      `\nNeeds ${SECRET_KEY_ENV} (the key the secret is encrypted with). The target must resolve to public\n` +
        "addresses unless --allow-private-networks. Recorded in the audit log (webhook.register).\n" +
        "JSON (--json): the endpoint, as in webhooks list. Bad input exits 2 and writes nothing.\n\n" +
        "Examples:\n  HOOK_SECRET=... soniq webhooks add https://ops.example.com/hooks --events job.dead_letter --secret-env HOOK_SECRET\n" +
        "  soniq webhooks add https://hooks.example.com/soniq --events job.failed,job.dead_letter --secret-env HOOK_SECRET \\\n" +
        '    --header "Authorization: Bearer $TOKEN" --max-attempts 8 --timeout 5s',
    )
    .action(async (url: string, o: AddFlags, command: Command) => {
      const ctx = Context.of(command, io);
      const registration: WebhookRegistration = {
        url,
        events: o.events as WebhookRegistration["events"],
        secret: secretOf(o, io.env),
        ...(o.header ? { headers: o.header } : {}),
        ...(o.maxAttempts === undefined ? {} : { maxAttempts: o.maxAttempts }),
        ...(o.timeout === undefined ? {} : { timeoutMs: durationMs("--timeout", o.timeout) }),
        ...(o.description === undefined ? {} : { description: o.description }),
      };
      const endpoint = await ctx.withApp(
        (soniq) => soniq.webhooks.register(registration, { actor: ctx.actor }),
        webhookApp(ctx, o, true),
      );
      if (ctx.json) return ctx.printer.json(shownEndpoint(endpoint));
      const headers = Object.entries(shownEndpoint(endpoint).headers).map(([name, v]) => `${name}: ${v}`);
      ctx.printer.line(
        `added webhook endpoint ${endpoint.id} -> ${shownUrl(endpoint.url)} (${endpoint.events.join(", ")})` +
          (headers.length > 0 ? `, headers ${headers.join(", ")}` : ""),
      );
    });
}

function removeCommand(webhooks: Command, io: Io): void {
  webhooks
    .command("remove")
    .description("remove an endpoint and its deliveries")
    .argument("<id>", "endpoint id")
    .addHelpText(
      "after",
      "\nAn unknown id exits 1. Recorded in the audit log (webhook.remove). JSON (--json): { id, removed: true }.\n\n" +
        "Examples:\n  soniq webhooks remove 0193c6e2-...",
    )
    .action(async (id: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      const removed = await ctx.withApp((soniq) => soniq.webhooks.remove(id, { actor: ctx.actor }));
      if (!removed) throw endpointNotFound(id);
      if (ctx.json) return ctx.printer.json({ id, removed: true });
      ctx.printer.line(`removed webhook endpoint ${id}`);
    });
}

interface DeliveryFlags {
  endpoint?: string;
  status?: WebhookDeliveryStatus;
  event?: string;
  limit?: number;
}

function deliveriesCommand(webhooks: Command, io: Io): void {
  webhooks
    .command("deliveries")
    .description("deliveries, newest first: status, attempts, last response, next attempt")
    .option("--endpoint <id>", "only this endpoint's")
    .addOption(new Option("--status <status>", "only this status").choices(WEBHOOK_DELIVERY_STATUSES))
    .option("--event <event>", "only this event")
    .option("--limit <n>", "at most n rows (default 100, at most 1000)", positiveInt("--limit"))
    .addHelpText(
      "after",
      "\nStatuses: pending (waiting for its next attempt), delivered (a 2xx answer), failed (every attempt\n" +
        "failed; soniq webhooks redeliver sends it again).\n" +
        "JSON (--json): an array of { id, endpointId, event, payload, status, attempts, maxAttempts, nextAttemptAt,\n" +
        "lastError, responseStatus, responseBody, createdAt, deliveredAt, updatedAt }.\n\n" +
        "Examples:\n  soniq webhooks deliveries --status failed\n  soniq webhooks deliveries --endpoint 0193c6e2-... --limit 20 --json",
    )
    .action(async (o: DeliveryFlags, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp(async (soniq) =>
        (
          await soniq.webhooks.deliveries({
            ...(o.endpoint === undefined ? {} : { endpointId: o.endpoint }),
            ...(o.status === undefined ? {} : { status: o.status }),
            ...(o.event === undefined ? {} : { event: o.event }),
            ...(o.limit === undefined ? {} : { limit: o.limit }),
          })
        ).map((d) => shownDelivery(soniq.options.redact, d)),
      );
      if (ctx.json) return ctx.printer.json(rows);
      deliveriesTable(ctx.printer, rows);
    });
}

function redeliverCommand(webhooks: Command, io: Io): void {
  webhooks
    .command("redeliver")
    .description("send delivered or failed deliveries again (same delivery id, a fresh attempt budget)")
    .argument("<id...>", "delivery ids")
    .addHelpText(
      "after",
      "\nA running worker sends them. An unknown id, or one still pending, exits 1 before anything changes.\n" +
        "Recorded in the audit log (webhook.redeliver). JSON (--json): an array of { id, redelivered }.\n\n" +
        "Examples:\n  soniq webhooks redeliver 0193c6e2-...",
    )
    .action(async (ids: string[], _o, command: Command) => {
      const ctx = Context.of(command, io);
      const done = await ctx.withApp(async (soniq) => {
        const rows = await Promise.all(ids.map((id) => soniq.webhooks.delivery(id)));
        const missing = ids.filter((_id, i) => rows[i] === null);
        if (missing.length > 0) throw deliveryNotFound(missing);
        const pending = ids.filter((_id, i) => rows[i]?.status === "pending");
        if (pending.length > 0)
          throw new CliError(
            "SONIQ_CLI_REFUSED",
            `delivery ${pending.join(", ")} is still pending (its attempts go on). Nothing was changed.`,
          );
        const out: { id: string; redelivered: boolean }[] = [];
        for (const id of ids)
          out.push({ id, redelivered: await soniq.webhooks.redeliver(id, { actor: ctx.actor }) });
        return out;
      });
      if (ctx.json) return ctx.printer.json(done);
      for (const r of done)
        ctx.printer.line(r.redelivered ? `redelivering ${r.id}` : `${r.id} was not redelivered`);
      if (done.some((r) => !r.redelivered)) process.exitCode = 1;
    });
}

function testCommand(webhooks: Command, io: Io): void {
  webhooks
    .command("test")
    .description("send one signed webhook.test request to an endpoint now and show the answer")
    .argument("<id>", "endpoint id")
    .option("--allow-private-networks", PRIVATE_HELP)
    .addHelpText(
      "after",
      `\nNeeds ${SECRET_KEY_ENV} (to sign with the endpoint's secret). Not stored as a delivery, not retried.\n` +
        "Exits 1 when the endpoint does not answer 2xx, or the id is unknown. Recorded in the audit log (webhook.test).\n" +
        "JSON (--json): { id, ok, status, error, durationMs }.\n\n" +
        "Examples:\n  soniq webhooks test 0193c6e2-...",
    )
    .action(async (id: string, o: PrivateFlag, command: Command) => {
      const ctx = Context.of(command, io);
      const result = await ctx.withApp(
        (soniq) => soniq.webhooks.test(id, { actor: ctx.actor }),
        webhookApp(ctx, o, true),
      );
      if (result === null) throw endpointNotFound(id);
      if (!result.ok) process.exitCode = 1;
      if (ctx.json) return ctx.printer.json({ id, ...result });
      const p = ctx.printer;
      const answer = result.status === null ? "no answer" : `HTTP ${result.status}`;
      p.line(
        result.ok
          ? `${p.status("ok")}: ${answer} in ${result.durationMs} ms`
          : `${p.status("failed")}: ${answer}${result.error ? ` (${result.error})` : ""} after ${result.durationMs} ms`,
      );
    });
}

function resealCommand(webhooks: Command, io: Io): void {
  webhooks
    .command("reseal")
    .description("re-encrypt every stored endpoint secret under the current key (after adding a new key)")
    .option("--dry-run", "open every secret and report what would be re-sealed; change nothing")
    .addHelpText(
      "after",
      `\nRotating the key: give every worker (and the CLI) a keyring holding the old and the new key, the new one\n` +
        `current: ${SECRET_KEYS_ENV}="k1:<old key>,k2:<new key>" ${SECRET_KEY_ID_ENV}=k2 (an app: webhooks.secretKey\n` +
        "{ current, keys }). New secrets are then sealed under k2; this command re-seals the stored ones, after which\n" +
        "k1 can leave the keyring. A secret sealed under a single key (SONIQ_SECRET_KEY) is opened by the keyring's\n" +
        "keys in turn. Each endpoint re-sealed is recorded in the audit log (webhook.reseal). A secret no key opens\n" +
        "is left as it is and listed; the command then exits 1.\n" +
        "JSON (--json): { keyId, resealed: [endpoint ids], alreadyCurrent, failed: [{ endpointId, keyId, error }], dryRun }.\n\n" +
        `Examples:\n  ${SECRET_KEYS_ENV}="k1:$OLD_KEY,k2:$NEW_KEY" ${SECRET_KEY_ID_ENV}=k2 soniq webhooks reseal --dry-run\n` +
        "  soniq webhooks reseal --module ./app.ts",
    )
    .action(async (o: { dryRun?: boolean }, command: Command) => {
      const ctx = Context.of(command, io);
      const result = await ctx.withApp(
        (soniq) => soniq.webhooks.reseal({ actor: ctx.actor, dryRun: o.dryRun === true }),
        webhookApp(ctx, {}, true),
      );
      if (result.failed.length > 0) process.exitCode = 1;
      if (ctx.json) return ctx.printer.json(result);
      const p = ctx.printer;
      const under = result.keyId === null ? "the single key" : `key ${result.keyId}`;
      const verb = result.dryRun ? "would re-seal" : "re-sealed";
      p.line(
        `${verb} ${result.resealed.length} endpoint secret(s) under ${under}; ${result.alreadyCurrent} already under it`,
      );
      for (const id of result.resealed) p.line(`  ${id}`);
      for (const f of result.failed) {
        const from = f.keyId === null ? "" : ` (key ${f.keyId})`;
        p.line(`${p.status("failed")}: ${f.endpointId}${from}: ${f.error}`);
      }
    });
}
