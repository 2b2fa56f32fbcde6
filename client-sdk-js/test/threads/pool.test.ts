import { afterEach, describe, expect, it } from "vitest";
import { KernelError } from "../../src/errors.js";
import { WorkerPool, probeThreads, type ThreadHandle } from "../../src/threads/pool.js";
import { platform } from "../../src/platform.js";
import { shareOf } from "../../src/threads/control.js";
import { splitAddWasm } from "../support/wasm.js";
import { Arena, SHARED_MAX_PAGES } from "../../src/wasm/arena.js";

const memory = () => new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });

/** A, B and C of n floats at 64, past A, past B; canaries everywhere else. */
function operands(mem: WebAssembly.Memory, n: number) {
  const f = new Float32Array(mem.buffer);
  f.fill(-7);
  const a = 16, b = a + n + 4, c = b + n + 4;
  for (let i = 0; i < n; i++) {
    f[a + i] = i;
    f[b + i] = 1000 * i;
  }
  return { f, offsets: Int32Array.of(4 * a, 4 * b, 4 * c), c };
}

describe("the worker pool", () => {
  let pool: WorkerPool | undefined;
  afterEach(() => pool?.close());

  it("computes every unit of a split kernel with 1 to 4 threads, more threads than units too, and writes nothing else", async () => {
    const mem = memory();
    pool = await WorkerPool.start({ threads: 4 });
    const module = new WebAssembly.Module(splitAddWasm());
    for (const n of [3, 37, 1000]) {
      const kernel = pool.load(module, "add", n, mem);
      for (const workers of [1, 2, 3, 4, 9]) {
        const { f, offsets, c } = operands(mem, n);
        pool.run(kernel, offsets, 3, workers);
        for (let i = 0; i < n; i++) expect(f[c + i]).toBe(1001 * i);
        const stray = f.findIndex((x, i) => i >= c + n && x !== -7);
        expect(stray).toBe(-1);
      }
      pool.release(kernel);
    }
  });

  it("takes runs of changing worker counts and parks between them, every run whole", async () => {
    const mem = memory();
    pool = await WorkerPool.start({ threads: 4 });
    const module = new WebAssembly.Module(splitAddWasm());
    const kernels = [2, 3, 5, 64].map((n) => ({ n, kernel: pool!.load(module, "add", n, mem) }));
    for (let i = 0; i < 2000; i++) {
      const { n, kernel } = kernels[i % kernels.length];
      const { f, offsets, c } = operands(mem, n);
      pool.run(kernel, offsets, 3, 1 + (i % 4));
      for (let j = 0; j < n; j++) if (f[c + j] !== 1001 * j) throw new Error(`run ${i}: C[${j}] is ${f[c + j]}`);
      if (i % 7 === 0) pool.park();
    }
  });

  it("shares units out contiguously and evenly, covering them all", () => {
    for (const [units, workers] of [[3, 4], [10, 3], [120, 2], [1, 1]]) {
      const shares = Array.from({ length: workers }, (_, w) => shareOf(units, workers, w));
      expect(shares[0][0]).toBe(0);
      expect(shares[workers - 1][1]).toBe(units);
      for (let w = 1; w < workers; w++) expect(shares[w][0]).toBe(shares[w - 1][1]);
      const sizes = shares.map(([a, b]) => b - a);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
  });

  it("reports a kernel that fails in a helper thread, and goes on working", async () => {
    const mem = memory();
    pool = await WorkerPool.start({ threads: 2 });
    // element 30 of 37 falls in the helper's share [18, 37)
    const broken = pool.load(new WebAssembly.Module(splitAddWasm(30)), "add", 37, mem);
    expect(() => pool!.run(broken, operands(mem, 37).offsets, 3)).toThrow(/a kernel thread failed: helper 1: .*unreachable/);
    const good = pool.load(new WebAssembly.Module(splitAddWasm()), "add", 37, mem);
    const { f, offsets, c } = operands(mem, 37);
    pool.run(good, offsets, 3);
    expect(f[c + 36]).toBe(36036);
    // a kernel that traps on every thread, the caller's first: the helper's failure does not outlive that run
    const everywhere = pool.load(new WebAssembly.Module(splitAddWasm(Infinity)), "add", 37, mem);
    expect(() => pool!.run(everywhere, offsets, 3)).toThrow(/unreachable/);
    pool.run(good, offsets, 3);
    expect(f[c + 36]).toBe(36036);
  });

  it("says so when a model outgrows the memory a shared arena may have", async () => {
    pool = await WorkerPool.start({ threads: 2 });
    const arena = new Arena(pool);
    expect(() => arena.alloc(SHARED_MAX_PAGES * 65536)).toThrow(/shared memory may grow to here; load it with threads: 1/);
    expect(arena.usage.liveBytes).toBe(0);
    expect(arena.alloc(64)).toBeGreaterThan(0); // and goes on serving what fits
  });

  it("starts another helper in place of one that never answers, and gives up when that one does not either", async () => {
    const host = platform().thread!;
    let stopped = 0;
    const silent = (): ThreadHandle => ({ post: () => undefined, listen: () => undefined, terminate: () => { stopped++; } });
    const lines: string[] = [];
    let starts = 0;
    pool = await WorkerPool.start({ threads: 2, startTimeoutMs: 200, log: (l) => lines.push(l), thread: () => (starts++ === 0 ? silent() : host()) });
    expect(lines).toEqual(["kernel thread 1 did not start within 200 ms; starting another"]);
    expect(stopped).toBe(1);
    const mem = memory();
    const { f, offsets, c } = operands(mem, 37);
    pool.run(pool.load(new WebAssembly.Module(splitAddWasm()), "add", 37, mem), offsets, 3);
    expect(f[c + 36]).toBe(36036); // the helper started second computes its share

    await expect(WorkerPool.start({ threads: 2, startTimeoutMs: 50, thread: silent })).rejects.toThrow(/kernel thread 1 did not start within 50 ms/);
    expect(stopped).toBe(3);
  });

  it("refuses what it cannot run, and runs nothing once closed", async () => {
    await expect(WorkerPool.start({ threads: 1 })).rejects.toThrow(/at least 2 threads/);
    const mem = memory();
    pool = await WorkerPool.start({ threads: 2 });
    const module = new WebAssembly.Module(splitAddWasm());
    expect(() => pool!.load(module, "add", 8, new WebAssembly.Memory({ initial: 1 }))).toThrow(/shared WebAssembly.Memory/);
    const kernel = pool.load(module, "add", 8, mem);
    expect(() => pool!.load(module, "nope", 8, mem)).toThrow(KernelError);
    pool.close();
    expect(() => pool!.run(kernel, operands(mem, 8).offsets, 3)).toThrow(/closed/);
  });
});

describe("the thread probe", () => {
  it("gives the host's cores, capped by the app", () => {
    const probe = probeThreads();
    expect(probe.threads).toBe(probe.cores);
    expect(probe.reason).toBeUndefined();
    expect(probeThreads(1).threads).toBe(1);
  });

  it("falls back to one thread without shared memory, and says why", () => {
    const saved = globalThis.SharedArrayBuffer;
    try {
      (globalThis as { SharedArrayBuffer?: unknown }).SharedArrayBuffer = undefined;
      expect(probeThreads()).toMatchObject({ threads: 1, reason: expect.stringMatching(/no SharedArrayBuffer/) });
    } finally {
      globalThis.SharedArrayBuffer = saved;
    }
    const page = globalThis as { crossOriginIsolated?: boolean };
    page.crossOriginIsolated = false;
    try {
      expect(probeThreads()).toMatchObject({ threads: 1, reason: expect.stringMatching(/Cross-Origin-Opener-Policy: same-origin/) });
    } finally {
      delete page.crossOriginIsolated;
    }
  });
});
