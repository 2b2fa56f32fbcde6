import { median } from "@jitzoo/client/internal";

/** Idle time before a runtime's calls when runtimes on threads take turns (see {@link interleaved}). */
const SETTLE_MS = 250;

/**
 * Calls each function once per round, in order, after one untimed round (first calls compile,
 * open sessions, warm up); `each` sees every round's outputs by name. The median ms of each. With
 * `settle`, each timed call follows an idle quarter second and an untimed call of the same
 * function: runtimes on threads keep them busy a while after a call (onnxruntime-web's pool
 * spins; jitzoo tunes between runs), which would land on the other runtime's timed call on a
 * machine with no core to spare (measured on 2 cores, MiniLM int8 at 2 threads: jitzoo 24.5 ms
 * called right after onnxruntime-web, 12–14 ms alone).
 */
export async function interleaved<K extends string>(rounds: number, calls: Record<K, () => Promise<unknown>>,
  each: (outputs: Record<K, unknown>) => void, settle = false): Promise<Record<K, number>> {
  const names = Object.keys(calls) as K[];
  const samples = new Map<K, number[]>(names.map((k) => [k, []]));
  for (let r = 0; r < rounds + 1; r++) {
    const outputs = {} as Record<K, unknown>;
    for (const name of names) {
      if (settle) {
        await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        await calls[name]();
      }
      const t0 = performance.now();
      outputs[name] = await calls[name]();
      if (r > 0) samples.get(name)!.push(performance.now() - t0);
    }
    each(outputs);
  }
  return Object.fromEntries(names.map((k) => [k, median(samples.get(k)!)])) as Record<K, number>;
}
