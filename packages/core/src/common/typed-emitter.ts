/**
 * A tiny typed event emitter. Unlike node's EventEmitter, an `error` event without listeners is not
 * thrown, and a listener that throws (or rejects) is reported to `onListenerError`, never to the emitter.
 */

export type Listener<T> = (payload: T) => void | Promise<void>;

export class TypedEmitter<Events extends { [K in keyof Events]: unknown }> {
  #listeners = new Map<keyof Events, Set<Listener<never>>>();

  constructor(private readonly onListenerError: (event: string, err: unknown) => void) {}

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    this.#listeners.get(event)?.delete(listener as Listener<never>);
  }

  once<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    const off = this.on(event, (payload) => {
      off();
      return listener(payload);
    });
    return off;
  }

  hasListeners(event: keyof Events): boolean {
    return (this.#listeners.get(event)?.size ?? 0) > 0;
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.#listeners.get(event);
    if (!set || set.size === 0) return;
    for (const listener of [...set]) {
      try {
        const r = (listener as Listener<Events[K]>)(payload);
        if (r && typeof (r as Promise<void>).then === "function") {
          (r as Promise<void>).then(undefined, (err: unknown) => this.onListenerError(String(event), err));
        }
      } catch (err) {
        this.onListenerError(String(event), err);
      }
    }
  }
}
