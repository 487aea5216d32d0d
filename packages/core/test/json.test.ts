import { describe, expect, it } from "vitest";
import { argsHash, canonicalJson, checkJson, MAX_JSON_DEPTH, storableText } from "../src/common/json.js";

describe("json/check", () => {
  it("accepts JSON values and returns them unchanged", () => {
    for (const v of [null, "s", true, 1.5, [1, "a", null], { a: { b: [1] } }, Object.create(null)]) {
      const r = checkJson(v);
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.value).toBe(v);
    }
  });

  it("rejects what does not survive a JSON round trip, naming the path", () => {
    class Point {
      x = 1;
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.me = cyclic;
    const cases: [unknown, string, RegExp][] = [
      [undefined, "$", /undefined/],
      [{ a: [1, undefined] }, "$.a[1]", /undefined/],
      [{ f: () => 1 }, "$.f", /function/],
      [{ n: 10n }, "$.n", /BigInt/],
      [{ s: Symbol("x") }, "$.s", /symbol/],
      [{ x: Number.POSITIVE_INFINITY }, "$.x", /finite/],
      [{ d: new Date() }, "$.d", /Date is not a plain object/],
      [{ m: new Map() }, "$.m", /Map/],
      [{ p: new Point() }, "$.p", /Point/],
      [cyclic, "$.me", /circular/],
      [{ s: "a\u0000b" }, "$.s", /NUL/],
      [["\ud800"], "$[0]", /lone surrogate/],
      [{ "k\u0000": 1 }, "$.k\u0000", /NUL/],
      ["\udc00x", "$", /lone surrogate/],
      [{ items: [0, "ok", { when: new Date() }] }, "$.items[2].when", /Date/],
      [[{ a: [{ b: { c: [null, { d: Number.NaN }] } }] }], "$[0].a[0].b.c[1].d", /finite/],
    ];
    for (const [value, path, problem] of cases) {
      const r = checkJson(value);
      expect(r.ok, path).toBe(false);
      if (!r.ok) {
        expect(r.problem.path).toBe(path);
        expect(r.problem.problem).toMatch(problem);
      }
    }
  });

  it("accepts nesting up to MAX_JSON_DEPTH containers; one deeper is named by a shortened path", () => {
    const nest = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { k: value };
      return value;
    };
    expect(checkJson(nest(MAX_JSON_DEPTH)).ok).toBe(true);
    const r = checkJson(nest(MAX_JSON_DEPTH + 1));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problem.problem).toBe(`nested deeper than ${MAX_JSON_DEPTH} levels`);
      // From the outermost container in: `[0]`, then `.k`, alternating, cut at 80 characters.
      expect(r.problem.path).toMatch(/^\$\[0\]\.k\[0\]\.k[.k[\]0]+\.\.\.$/);
      expect(r.problem.path).toHaveLength(83);
    }
  });

  it("drops undefined object properties like JSON.stringify, and allows shared (non-cyclic) references", () => {
    const shared = { v: 1 };
    const r = checkJson({ a: 1, gone: undefined, x: shared, y: shared });
    expect(r).toEqual({ ok: true, value: { a: 1, x: { v: 1 }, y: { v: 1 } } });
  });
});

describe("json/canonical-hash", () => {
  it("matches Python's json.dumps(sort_keys=True, separators=(',', ':')) byte for byte", () => {
    // Vectors produced with CPython's json module and hashlib.sha256.
    const v = { b: [1, 2, { z: null, a: true }], a: "héllo ☃ 𝄞", c: 1.5 };
    expect(canonicalJson(v)).toBe(
      '{"a":"h\\u00e9llo \\u2603 \\ud834\\udd1e","b":[1,2,{"a":true,"z":null}],"c":1.5}',
    );
    expect(argsHash(v)).toBe("bf40d13a1d4384b1482e19219b2d3a978f345901df922fa28589b87b1ed79b8b");
    expect(argsHash({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    expect(argsHash([])).toBe("4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");
    expect(argsHash({ k: 'line\nbreak\t"q" \u007f' })).toBe(
      "90f875c8258cb946b2b77bfea4fa61b8ca863b6ff75ec832229827c72ea86f2a",
    );
  });

  it("is independent of key order and sensitive to values and list order", () => {
    expect(argsHash({ a: 1, b: { c: 2, d: 3 } })).toBe(argsHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(argsHash({ a: [1, 2] })).not.toBe(argsHash({ a: [2, 1] }));
    expect(argsHash({ a: 1 })).not.toBe(argsHash({ a: "1" }));
  });
});

describe("json/storable-text", () => {
  it("replaces NUL and lone surrogates, keeps pairs and plain text as they are", () => {
    expect(storableText("plain")).toBe("plain");
    expect(storableText("emoji \ud83d\ude00")).toBe("emoji \ud83d\ude00");
    expect(storableText("a\u0000b\ud800c\udc00")).toBe("a\ufffdb\ufffdc\ufffd");
  });
});
