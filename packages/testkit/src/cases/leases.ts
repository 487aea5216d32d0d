import { defineCase } from "../define-case.js";
import { eventually } from "../eventually.js";
import { equal } from "./helpers.js";

export const leaseCases = [
  defineCase({
    id: "leases/exclusive",
    title: "while one holder has a lease, another cannot acquire it",
    async run(ctx) {
      const name = `lease-${ctx.id()}`;
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-a", 60_000),
        true,
        "a free lease must be acquired",
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-b", 60_000),
        false,
        "a held lease must be refused to others",
      );
      const results = await Promise.all(
        ["c", "d", "e", "f"].map((h) => ctx.backend.leases.tryAcquire(`${name}-race`, `holder-${h}`, 60_000)),
      );
      equal(
        results.filter(Boolean).length,
        1,
        "of 4 concurrent acquirers of a free lease exactly one must win",
      );
    },
  }),
  defineCase({
    id: "leases/renew-by-holder",
    title: "the holder renews its lease by acquiring again",
    async run(ctx) {
      const name = `lease-${ctx.id()}`;
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-a", 60_000),
        true,
        "a free lease must be acquired",
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-a", 60_000),
        true,
        "the holder must be able to renew",
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-b", 60_000),
        false,
        "a renewed lease must be refused to others",
      );
    },
  }),
  defineCase({
    id: "leases/expire-after-ttl",
    title: "a lease that is not renewed expires after its TTL and another holder can take it",
    // Every backend: the contract acquires "for ttlMs". Advisory-lock backends may free a lease sooner
    // (the holder's session died), never later than its TTL without a renewal.
    async run(ctx) {
      const name = `lease-${ctx.id()}`;
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-a", 1000),
        true,
        "a free lease must be acquired",
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-b", 60_000),
        false,
        "the lease must be held within its TTL",
      );
      await eventually(
        async () =>
          equal(await ctx.backend.leases.tryAcquire(name, "holder-b", 60_000), true, "lease not yet free"),
        { timeoutMs: 5000, intervalMs: 50 },
      );
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-a", 60_000),
        false,
        "the old holder must have lost it",
      );
    },
  }),
  defineCase({
    id: "leases/release",
    title: "leases.release frees the lease at once; a non-holder's release does nothing",
    async run(ctx) {
      const name = `lease-${ctx.id()}`;
      await ctx.backend.leases.tryAcquire(name, "holder-a", 60_000);
      await ctx.backend.leases.release(name, "holder-b");
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-b", 60_000),
        false,
        "a release by a non-holder must not free it",
      );
      await ctx.backend.leases.release(name, "holder-a");
      equal(
        await ctx.backend.leases.tryAcquire(name, "holder-b", 60_000),
        true,
        "after release another holder must get it",
      );
    },
  }),
];
