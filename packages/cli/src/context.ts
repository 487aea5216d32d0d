/**
 * What every command receives: the global flags (`--database-url`, `--json`, `--module`, `--redact`, accepted
 * before or after the subcommand), a printer, the audit actor, and `withApp`, which opens a Soniq instance for
 * the command and always closes it: the app's own (from `--module` or SONIQ_MODULE, so its backend, `redact`
 * and job definitions apply), else one on the chosen database, redacting the `--redact` / SONIQ_REDACT paths.
 */
import { hostname, userInfo } from "node:os";
import { createInterface } from "node:readline/promises";
import { Soniq, type WebhookOptions } from "@soniq/core";
import type { Command } from "commander";
import {
  chooseDatabase,
  type DatabaseChoice,
  type DatabaseTarget,
  openBackend,
  parseDatabaseUrl,
} from "./database.js";
import { CliError, shownFailure, usage } from "./errors.js";
import { loadApp } from "./module-loader.js";
import { type Io, Printer } from "./output.js";
import { chooseRedact, type RedactRequest, redactBesideModule } from "./redaction.js";

export interface Globals {
  databaseUrl?: string;
  module?: string;
  /** `--redact <paths>` a string, `--no-redact` false. */
  redact?: string | boolean;
  json?: boolean;
  color?: boolean;
}

/** How `withApp` builds the CLI's own instance (a `--module` app keeps its own options). */
export interface AppOptions {
  /** False only for setup: the tables may not exist yet. */
  mustExist?: boolean;
  /** The webhook options of the CLI's own instance (the webhooks commands: SONIQ_SECRET_KEY). */
  webhooks?: WebhookOptions;
}

export class Context {
  readonly printer: Printer;
  readonly json: boolean;
  readonly database: DatabaseChoice;
  /** The app module given with `--module` (or SONIQ_MODULE), if any. */
  readonly module: string | undefined;
  /** `--redact` / SONIQ_REDACT paths (checked here: a bad one is a usage error), `--no-redact`, or neither. */
  readonly redact: RedactRequest;
  /** Set once a command resolved its database, so errors can name it. */
  target: DatabaseTarget | null = null;

  constructor(
    readonly io: Io,
    globals: Globals,
  ) {
    const env = globals.color === false ? { ...io.env, NO_COLOR: "1" } : io.env;
    this.printer = new Printer({ ...io, env });
    this.json = globals.json === true;
    this.database = chooseDatabase(globals.databaseUrl, io.env);
    this.module = globals.module ?? (io.env.SONIQ_MODULE || undefined);
    this.redact = chooseRedact(globals.redact, io.env);
  }

  static of(command: Command, io: Io): Context {
    return new Context(io, command.optsWithGlobals<Globals>());
  }

  /** `cli:<os user>@<hostname>`, the audit actor of every write. */
  get actor(): string {
    let user = "unknown";
    try {
      user = userInfo().username;
    } catch {
      user = this.io.env.USER ?? this.io.env.LOGNAME ?? "unknown";
    }
    return `cli:${user}@${hostname()}`;
  }

  resolveTarget(): DatabaseTarget {
    this.target ??= parseDatabaseUrl(this.database.url);
    return this.target;
  }

  /**
   * Runs `fn` with a Soniq instance on the chosen database. The CLI defines no jobs, so the instance
   * accepts unknown job names (replay checks the task registry itself); `mustExist` is false only for setup.
   * What `fn` throws leaves as the instance's `redact` lets it be shown (`shownFailure`).
   */
  async withApp<T>(fn: (soniq: Soniq) => Promise<T>, options: AppOptions = {}): Promise<T> {
    const soniq = this.module ? await this.#moduleApp(this.module) : await this.#ownApp(options);
    try {
      return await fn(soniq);
    } catch (err) {
      throw shownFailure(soniq.options.redact, err);
    } finally {
      await soniq.close().catch(() => {});
    }
  }

  async #ownApp(options: AppOptions): Promise<Soniq> {
    const backend = await openBackend(this.resolveTarget(), options.mustExist ?? true, this.io.env);
    const webhooks = options.webhooks && { webhooks: options.webhooks };
    const redact = this.redact.kind === "paths" && { redact: this.redact.paths };
    return new Soniq({ backend, allowUnknownJobNames: true, producerId: this.actor, ...webhooks, ...redact });
  }

  /**
   * The app's own instance; a `--database-url` of another kind next to it is a mistake, not a choice, and so
   * are `--redact` paths (the app's `redact` applies, or it has none to add them to).
   */
  async #moduleApp(specifier: string): Promise<Soniq> {
    const app = await loadApp(specifier);
    await this.checkModuleRedact(app, specifier);
    if (this.database.source === "flag" && parseDatabaseUrl(this.database.url).kind !== app.backend.name) {
      await app.close().catch(() => {});
      throw usage(
        `--database-url names a ${parseDatabaseUrl(this.database.url).kind} database, but ${specifier} builds its own ` +
          `${app.backend.name} backend, which is the one used. Drop --database-url, or change the module.`,
      );
    }
    return app;
  }

  /** Refuses `--redact` / SONIQ_REDACT paths beside an app module (closing the app): a usage error. */
  async checkModuleRedact(app: Soniq, specifier: string): Promise<void> {
    const mistake = redactBesideModule(this.redact, app, specifier);
    if (!mistake) return;
    await app.close().catch(() => {});
    throw mistake;
  }

  /**
   * Permission for a bulk destructive action: `--yes` grants it; on a TTY the user is asked; elsewhere it
   * is refused (exit 1, nothing changed).
   */
  async confirm(question: string, yes: boolean | undefined): Promise<void> {
    if (yes) return;
    const stdin = process.stdin;
    if (!stdin.isTTY || !this.io.err.isTTY) {
      throw new CliError(
        "SONIQ_CLI_REFUSED",
        `refusing to ${question} without confirmation: pass --yes (or run it in a terminal to be asked). Nothing was changed.`,
      );
    }
    const rl = createInterface({ input: stdin, output: this.io.err });
    try {
      const answer = await rl.question(`${question}? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) {
        throw new CliError("SONIQ_CLI_REFUSED", "cancelled: nothing was changed.");
      }
    } finally {
      rl.close();
    }
  }
}
