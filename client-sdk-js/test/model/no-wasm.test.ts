// Engines that lack what the generic kernels need: no Wasm SIMD (the reference kernels until the
// gateway's are checked), or no WebAssembly at all (the reference kernels, and no session): a note
// in stats().notes, outputs still right, never a crash.
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadModel } from "../../src/load.js";
import { FakeGateway } from "../support/fake-gateway.js";
import { runUntilSettled, smallMatmul } from "../support/small-matmul.js";
import { naiveMatmulArtifact } from "../support/wasm.js";
import { K, M, N } from "../support/small-matmul.js";

describe("an engine without what the generic kernels need", () => {
  let gateway: FakeGateway | undefined;
  afterEach(async () => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    await gateway?.stop();
    gateway = undefined;
  });

  it("without Wasm SIMD (before any test compiles the generic module): the reference kernels until the gateway's are checked, and a note", async () => {
    const validate = WebAssembly.validate;
    // an engine of Wasm 1.0: any module with a 0xfd (SIMD) prefix is refused, as the generic kernels' is
    vi.spyOn(WebAssembly, "validate").mockImplementation((bytes) => !new Uint8Array(bytes as ArrayBuffer).includes(0xfd) && validate(bytes));
    const model = await loadModel(smallMatmul(), { store: null, threads: 1 });
    await runUntilSettled(model, 2);
    const stats = model.stats();
    expect(stats.ops.map((o) => o.source)).toEqual(["reference"]);
    expect(stats.notes.join(" ")).toMatch(/this engine has no Wasm SIMD: ops start on the SDK's reference kernels/);
    await model.close();
  });

  it("without WebAssembly: every op on its reference kernel, the gateway not asked, and a note that says why", async () => {
    gateway = await FakeGateway.start({ initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }), offers: [] });
    vi.stubGlobal("WebAssembly", undefined);
    const model = await loadModel(smallMatmul(), { gateway: gateway.url, store: null, threads: 2 });
    await runUntilSettled(model, 3); // each output checked against the reference
    const stats = model.stats();
    expect(stats.ops.map((o) => o.source)).toEqual(["reference"]);
    expect(stats.notes.join(" ")).toMatch(/WebAssembly is unavailable here: every op runs its reference kernel .*the gateway is not asked/);
    expect(stats.threads).toBe(1);
    expect(gateway.connections).toBe(0);
    await model.close();
  });
});
