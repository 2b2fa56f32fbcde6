import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Microbench } from "../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Primitive } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { main, type CliIo } from "../src/cli/tune.js";
import { FakeGateway } from "./support/fake-gateway.js";
import { matmulModel } from "./support/onnx.js";
import { naiveMatmulArtifact } from "./support/wasm.js";

function io(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, env, out: (l) => stdout.push(...l.split("\n")), err: (l) => stderr.push(...l.split("\n")) };
}

let gateway: FakeGateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

describe("tune CLI", () => {
  it("refuses an unknown or missing workload with exit code 2", async () => {
    const unknown = io();
    expect(await main(["--workload", "nope"], unknown)).toBe(2);
    expect(unknown.stderr[0]).toBe('unknown workload "nope"');
    expect(await main([], io())).toBe(2);
    expect(await main(["--bogus"], io())).toBe(2);
  });

  it("exits 1 with a clear message when the gateway is unreachable", async () => {
    const run = io({ JITZOO_GATEWAY_URL: "ws://127.0.0.1:1/v1/session" });
    expect(await main(["--workload", "skeleton"], run)).toBe(1);
    expect(run.stderr.at(-1)).toMatch(/^tune failed: cannot connect to ws:\/\/127\.0\.0\.1:1\/v1\/session/);
  });

  it("tunes the skeleton workload and ends stdout with one JSON line", async () => {
    const shape: [number, number, number] = [128, 256, 96];
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("kinit", shape), fromZoo: false }),
      offers: [naiveMatmulArtifact("k1", shape), naiveMatmulArtifact("k2", shape, 2)],
      offersFromZoo: 1,
    });
    const run = io({ JITZOO_GATEWAY_URL: gateway.url });
    expect(await main(["--workload", "skeleton", "--fingerprint", "cli-test", "--json"], run)).toBe(0);
    const json = JSON.parse(run.stdout.at(-1)!);
    expect(json).toMatchObject({
      workload: "skeleton", fingerprint: "cli-test", rounds: 1, kernels_received: 2, offers_from_zoo: 1, kernels_validated: 2,
      kernels_invalid: 1, kernels_timed: 2, reports_acked: 1, initial_from_zoo: false,
    });
    expect(json.ops).toHaveLength(1);
    expect(json.ops[0]).toMatchObject({ op: "matmul", shape, initial_from_zoo: false, zoo_kernel_ids: ["k1"] });
    expect(["kinit", "k1"]).toContain(json.ops[0].best_kernel_id);
    for (const key of ["best_ms", "gflops", "time_to_best_ms"]) expect(json.ops[0][key]).toBeGreaterThan(0);
    expect(run.stdout.some((l) => l.startsWith("op ") && l.includes("GFLOP/s"))).toBe(true);
  });

  it("sends a stored microbenchmark result in the session, and refuses a file it cannot read", async () => {
    const shape: [number, number, number] = [128, 256, 96];
    gateway = await FakeGateway.start({ initial: () => ({ artifact: naiveMatmulArtifact("kinit", shape), fromZoo: false }), offers: [] });
    const dir = mkdtempSync(join(tmpdir(), "jitzoo-cli-"));
    const file = join(dir, "node.json");
    writeFileSync(file, JSON.stringify({ runner: "node", engine: "node 20", primitives: { vectorize: 1.9, loop_order: 1.02 }, peak_gflops: 47.5 }));
    const run = io({ JITZOO_GATEWAY_URL: gateway.url });
    expect(await main(["--workload", "skeleton", "--microbench", file, "--json"], run)).toBe(0);
    expect(JSON.parse(run.stdout.at(-1)!).microbench_acked).toBe(true);
    const sent = gateway.received.find((f) => f.frame.case === "microbench")!.frame.value as Microbench;
    expect(sent.engine).toBe("node 20");
    expect(sent.speedups.map((s) => [s.primitive, s.speedup])).toEqual([[Primitive.VECTORIZE, 1.9], [Primitive.LOOP_ORDER, 1.02]]);
    expect(sent.peakGflops).toBe(47.5);

    writeFileSync(file, JSON.stringify({ primitives: { vectorize: 2 }, peak_gflops: "fast" }));
    const badPeak = io({ JITZOO_GATEWAY_URL: gateway.url });
    expect(await main(["--workload", "skeleton", "--microbench", file], badPeak)).toBe(2);
    expect(badPeak.stderr[0]).toMatch(/^--microbench .*: peak_gflops is not a positive number: "fast"/);

    writeFileSync(file, JSON.stringify({ primitives: { warp_drive: 2 } }));
    const bad = io({ JITZOO_GATEWAY_URL: gateway.url });
    expect(await main(["--workload", "skeleton", "--microbench", file], bad)).toBe(2);
    expect(bad.stderr[0]).toMatch(/^--microbench .*: unknown primitive "warp_drive" \(known: vectorize, unroll, loop_order/);
    rmSync(dir, { recursive: true });
  });

  it("prints the device fingerprint", async () => {
    const run = io();
    expect(await main(["--print-fingerprint"], run)).toBe(0);
    expect(run.stdout).toHaveLength(1);
    expect(run.stdout[0]).toMatch(/^[0-9a-f]{32}$/);
  });

  it("tunes a model file until every op settles, with a per-op table and a JSON line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jitzoo-cli-"));
    try {
      const file = join(dir, "mm.onnx");
      writeFileSync(file, matmulModel(16, 32, 24));
      gateway = await FakeGateway.start({
        initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [16, 32, 24]), fromZoo: false }),
        offers: [naiveMatmulArtifact("k-other", [16, 32, 24])],
      });
      const run = io({ JITZOO_GATEWAY_URL: gateway.url });
      // a tiny op: at the default budget a timed pair (0.5 ms at least) waits for thousands of its microsecond runs
      // the fake gateway serves one thread's kernels
      expect(await main(["--model", file, "--seq", "16", "--budget", "1", "--runs", "20000", "--threads", "1", "--fingerprint", "test-device", "--json"], run)).toBe(0);
      expect(run.stdout.join("\n")).toMatch(/matmul\|16x32x24 +1 +k-(initial|other)/);
      const json = JSON.parse(run.stdout.at(-1)!);
      expect(json.settled).toBe(true);
      expect(json.ops).toHaveLength(1);
      expect(json.ops[0].refused).toBe(0);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it("refuses a missing model file, a bad --seq or a bad --budget with exit code 2", async () => {
    const missing = io();
    expect(await main(["--model", "/nonexistent/model.onnx"], missing)).toBe(2);
    expect(missing.stderr.join(" ")).toMatch(/\/nonexistent\/model\.onnx: .*no such file/i);
    const bad = io();
    expect(await main(["--model", "x.onnx", "--seq", "0"], bad)).toBe(2);
    expect(bad.stderr[0]).toBe("--seq must be a positive integer");
    for (const budget of ["0", "11", "lots"]) {
      const over = io();
      expect(await main(["--model", "x.onnx", "--budget", budget], over)).toBe(2);
      expect(over.stderr[0]).toBe("--budget must be a fraction of inference time above 0 and at most 10");
    }
  });
});
