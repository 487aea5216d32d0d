/** The audit actor of `soniq mcp`'s writes: `mcp:<client name>`, always storable as an audit actor. */
import { describe, expect, it } from "vitest";
import { actorFor } from "../src/server.js";

describe("soniq mcp audit actor", () => {
  it("mcp/actor-from-client-name: the handshake's name, made storable", () => {
    expect(actorFor("claude-ai")).toBe("mcp:claude-ai");
    expect(actorFor(undefined)).toBe("mcp:unknown");
    expect(actorFor(" \u0000\n ")).toBe("mcp:unknown");
    expect(actorFor("bad\u0000name\n")).toBe("mcp:badname");
    const long = actorFor("x".repeat(500));
    expect(long).toHaveLength(200);
    // Cut inside a surrogate pair: the lone half is dropped (core refuses lone surrogates in an actor).
    expect(actorFor(`${"x".repeat(194)}😀😀`)).toMatch(/^mcp:x{194}😀$/);
    expect(actorFor(`${"x".repeat(195)}😀`)).toMatch(/^mcp:x{195}$/);
    expect(actorFor("a\uD800b")).toBe("mcp:ab");
  });
});
