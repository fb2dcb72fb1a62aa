/**
 * Bounded read-ahead over an async iterable: a background loop pulls up to `limit` items ahead of the
 * consumer, so the next page's request is on the wire while the current page is being written.
 * Memory stays bounded (at most `limit` items buffered, plus the page the source is parsing); an
 * error of the source reaches the consumer after the items before it; a consumer that stops early
 * (break, throw) stops the source too (its `return()` is called, which ends a paged client iterator).
 */
export async function* readAhead<T>(source: AsyncIterable<T>, limit: number): AsyncGenerator<T> {
  if (limit < 1) throw new RangeError('readAhead: limit must be at least 1');
  const it = source[Symbol.asyncIterator]();
  const buf: T[] = [];
  let head = 0;
  let finished = false; // the source ended (normally or with an error)
  let failed = false;
  let error: unknown;
  let stopped = false; // the consumer went away
  let wakeConsumer: (() => void) | undefined;
  let wakeProducer: (() => void) | undefined;
  const buffered = (): number => buf.length - head;

  const producer = (async () => {
    try {
      while (!stopped) {
        if (buffered() >= limit) {
          await new Promise<void>((resolve) => (wakeProducer = resolve));
          continue;
        }
        const r = await it.next();
        if (r.done) break;
        buf.push(r.value);
        const w = wakeConsumer;
        wakeConsumer = undefined;
        w?.();
      }
    } catch (err) {
      failed = true;
      error = err;
    } finally {
      finished = true;
      const w = wakeConsumer;
      wakeConsumer = undefined;
      w?.();
    }
  })();

  let completed = false;
  try {
    for (;;) {
      if (buffered() > 0) {
        const value = buf[head] as T;
        buf[head] = undefined as T;
        head++;
        // the buffer's consumed front is dropped now and then, so the array does not grow with the export
        if (head >= 1024 && head * 2 >= buf.length) {
          buf.splice(0, head);
          head = 0;
        }
        if (head > 1024 && head * 2 > buf.length) {
          buf.splice(0, head);
          head = 0;
        }
        const w = wakeProducer;
        wakeProducer = undefined;
        w?.();
        yield value;
        continue;
      }
      if (finished) {
        if (failed) throw error;
        completed = true;
        return;
      }
      await new Promise<void>((resolve) => (wakeConsumer = resolve));
    }
  } finally {
    stopped = true;
    const w = wakeProducer;
    wakeProducer = undefined;
    w?.();
    await producer;
    if (!completed && !failed) await it.return?.();
  }
}
