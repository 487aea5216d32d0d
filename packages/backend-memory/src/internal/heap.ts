/** A binary min-heap. The claim path pops from these instead of sorting every queued job per call. */
export class Heap<T> {
  private items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  /** How many items satisfy `pred`, counting up to `upTo` at most (in storage order: no pops). */
  count(pred: (item: T) => boolean, upTo: number): number {
    let n = 0;
    for (const item of this.items) {
      if (n >= upTo) break;
      if (pred(item)) n++;
    }
    return n;
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent] as T;
      if (!this.less(item, p)) break;
      items[i] = p;
      i = parent;
    }
    items[i] = item;
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      this.siftDown(last);
    }
    return top;
  }

  /** Keep only the items `keep` accepts, then restore the heap order in O(n). */
  retain(keep: (item: T) => boolean): void {
    this.items = this.items.filter(keep);
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) {
      this.siftDownFrom(i);
    }
  }

  private siftDown(item: T): void {
    this.items[0] = item;
    this.siftDownFrom(0);
  }

  private siftDownFrom(start: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[start] as T;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && this.less(items[right] as T, items[left] as T)) child = right;
      const c = items[child] as T;
      if (!this.less(c, item)) break;
      items[i] = c;
      i = child;
    }
    items[i] = item;
  }
}
