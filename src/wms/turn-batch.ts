/**
 * The answers of one event-loop turn, handed on together once the requests they released are on the wire.
 *
 * undici (7.28 and later) writes a request on a reused keep-alive socket only in the loop's check phase: its
 * idle-socket validation (GHSA-35p6-xmwp-9g52) yields one setImmediate so that bytes, FIN or RST already
 * pending on the idle socket are read before the next request goes out. An answer frees its request slot at
 * once and the next request is dispatched at once, but it is written only after everything else the loop does
 * in that poll phase: with each answer's processing (envelope, schema, the record's settle, the next record
 * into the window) done right behind it, every request released in a busy turn waited for the processing of
 * all the turn's other answers (measured at concurrency 128, 20 ms: dispatch to written 0.9 ms median, 5.4 ms
 * p90). The answers wait here instead, in one batch, until the check phase after the next poll phase: the
 * turn's requests are written first, and the answers are processed together (fewer loop turns: 4-7 % less CPU
 * a record in the benchmarks, docs/perf/profile-run.md).
 *
 * Two setImmediate hops: one registered while the answers arrive (poll phase) runs in this turn's check phase,
 * before the requests dispatched after it; the second, registered from there, runs in the next turn's check
 * phase, after its poll phase. Not a timer: setTimeout(0) waits at least 1 ms.
 */
export function createTurnBatch(): () => Promise<void> {
  let waiting: Array<() => void> = [];
  const handOn = (): void => {
    const batch = waiting;
    waiting = [];
    for (const resolve of batch) resolve();
  };
  return () =>
    new Promise<void>((resolve) => {
      if (waiting.push(resolve) === 1) setImmediate(() => setImmediate(handOn));
    });
}
