/**
 * Releases are recorded with changesets (.changeset/, `pnpm changeset`): every published package carries a
 * CHANGELOG.md whose newest entry is the version in its package.json (what `pnpm changeset version` writes), and the
 * packed tarball includes it (`files`; scripts/pack-check.mjs checks the tarball itself).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  files?: string[];
}

const published = readdirSync(join(ROOT, "packages"))
  .map((dir) => ({ dir: join(ROOT, "packages", dir), file: join(ROOT, "packages", dir, "package.json") }))
  .filter(({ file }) => existsSync(file))
  .map(({ dir, file }) => ({ dir, manifest: JSON.parse(readFileSync(file, "utf8")) as Manifest }))
  .filter(({ manifest }) => manifest.private !== true);

describe("changelogs", () => {
  it("changelogs/setup: changesets is configured for this repository (public access, base branch main)", () => {
    const config = JSON.parse(readFileSync(join(ROOT, ".changeset", "config.json"), "utf8")) as {
      access: string;
      baseBranch: string;
    };
    expect([config.access, config.baseBranch]).toEqual(["public", "main"]);
    expect(published.length).toBeGreaterThanOrEqual(10);
  });

  it.each(published.map((p) => [p.manifest.name, p] as const))(
    "changelogs/per-package: %s has a CHANGELOG.md whose newest entry is its version, and packs it",
    (_name, { dir, manifest }) => {
      const text = readFileSync(join(dir, "CHANGELOG.md"), "utf8");
      expect(text.split("\n")[0]).toBe(`# ${manifest.name}`);
      expect(text.match(/^## (.+)$/m)?.[1]).toBe(manifest.version);
      expect(manifest.files).toContain("CHANGELOG.md");
    },
  );
});
