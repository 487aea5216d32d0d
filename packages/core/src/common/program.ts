/**
 * Rules written once as programs over a small store (the flow engine's shape): a program is a generator that
 * yields store calls and receives their answers, so one program runs over a synchronous store (SQLite and
 * memory, inside their synchronous transactions) and over an asynchronous one (Postgres) alike.
 */

type AnyMethod = (...args: never[]) => unknown;

/** The calls a program may make on a store `S`: an operation's name and its arguments. */
export type StoreCall<S> = {
  [K in keyof S]: S[K] extends AnyMethod ? { op: K; args: Parameters<S[K]> } : never;
}[keyof S];

/** A program over store `S` that returns `T`. */
export type Program<S, T> = Generator<StoreCall<S>, T, unknown>;

/** The same store with every method asynchronous. */
export type AsyncStore<S> = {
  [K in keyof S]: S[K] extends AnyMethod ? (...args: Parameters<S[K]>) => Promise<ReturnType<S[K]>> : never;
};

/** Inside a program: `yield* storeCall<S, "op">("op", ...args)` calls the store and returns its answer. */
export function* storeCall<S, K extends keyof S>(
  op: K,
  ...args: S[K] extends AnyMethod ? Parameters<S[K]> : never
): Generator<StoreCall<S>, S[K] extends AnyMethod ? ReturnType<S[K]> : never, unknown> {
  return (yield { op, args } as unknown as StoreCall<S>) as S[K] extends AnyMethod ? ReturnType<S[K]> : never;
}

type Untyped = (...args: unknown[]) => unknown;

/** Runs a program over a synchronous store (inside the caller's synchronous transaction). */
export function runSync<S, T>(program: Program<S, T>, store: S): T {
  let next = program.next();
  while (!next.done) {
    const { op, args } = next.value as { op: keyof S; args: unknown[] };
    next = program.next((store[op] as Untyped).apply(store, args));
  }
  return next.value;
}

/** Runs a program over an asynchronous store (inside the caller's transaction). */
export async function runAsync<S, T>(program: Program<S, T>, store: AsyncStore<S>): Promise<T> {
  let next = program.next();
  while (!next.done) {
    const { op, args } = next.value as { op: keyof S; args: unknown[] };
    next = program.next(await (store[op] as unknown as Untyped).apply(store, args));
  }
  return next.value;
}
