/**
 * How many times the event loop turned (a setImmediate ran) while `work` was pending: 0 for work done in one
 * synchronous stretch, at least n - 1 for work that yields between n slices. A count, not a time: it cannot be
 * fooled by a slow machine.
 */
export async function loopTurnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let pending = true;
  const turn = (): void => {
    turns++;
    if (pending) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { value: await work(), turns };
  } finally {
    pending = false;
  }
}
