import { median } from "@jitzoo/client/internal";

/**
 * Calls each function once per round, in order, after one untimed round (first calls compile,
 * open sessions, warm up); `each` sees every round's outputs by name. The median ms of each. With
 * `settle`, each timed call follows an untimed one of the same function: runtimes on threads
 * leave them spinning a while after a call (onnxruntime-web's pool does), which would slow the
 * next runtime's call on a machine with no core to spare.
 */
export async function interleaved<K extends string>(rounds: number, calls: Record<K, () => Promise<unknown>>,
  each: (outputs: Record<K, unknown>) => void, settle = false): Promise<Record<K, number>> {
  const names = Object.keys(calls) as K[];
  const samples = new Map<K, number[]>(names.map((k) => [k, []]));
  for (let r = 0; r < rounds + 1; r++) {
    const outputs = {} as Record<K, unknown>;
    for (const name of names) {
      if (settle) await calls[name]();
      const t0 = performance.now();
      outputs[name] = await calls[name]();
      if (r > 0) samples.get(name)!.push(performance.now() - t0);
    }
    each(outputs);
  }
  return Object.fromEntries(names.map((k) => [k, median(samples.get(k)!)])) as Record<K, number>;
}
