import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { ModelProtoSchema, TensorProto_DataType } from "../../src/gen/onnx/onnx_pb.js";
import { loadModel, type Model } from "../../src/model/engine.js";
import { seededFloats } from "../../src/reference.js";
import { FakeGateway } from "../support/fake-gateway.js";
import { naiveMatmulArtifact } from "../support/wasm.js";

const [M, K, N] = [16, 32, 24];

/** y = x · W, W an initializer: one matmul op [16, 32, 24]. */
function matmulModel(): Uint8Array {
  const info = (name: string, dims: number[]) => ({
    name,
    type: { value: { case: "tensorType" as const, value: { elemType: TensorProto_DataType.FLOAT, shape: { dim: dims.map((d) => ({ value: { case: "dimValue" as const, value: BigInt(d) } })) } } } },
  });
  const w = seededFloats(K * N, 3);
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, {
    irVersion: 8n,
    opsetImport: [{ domain: "", version: 17n }],
    graph: {
      name: "mm", node: [{ name: "mm", opType: "MatMul", input: ["x", "w"], output: ["y"] }],
      initializer: [{ name: "w", dims: [BigInt(K), BigInt(N)], dataType: TensorProto_DataType.FLOAT, floatData: Array.from(w) }],
      input: [info("x", [M, K])], output: [info("y", [M, N])],
    },
  }));
}

function expected(x: Float32Array): Float32Array {
  const w = seededFloats(K * N, 3);
  const y = new Float32Array(M * N);
  for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
    let s = 0;
    for (let k = 0; k < K; k++) s += x[i * K + k] * w[k * N + j];
    y[i * N + j] = s;
  }
  return y;
}

const x = { data: seededFloats(M * K, 9), dims: [M, K] };

async function runUntilSettled(model: Model, most = 400): Promise<void> {
  const want = expected(x.data);
  for (let r = 0; r < most && !model.stats().settled; r++) {
    const { y } = await model.run({ x });
    (y.data as Float32Array).forEach((v, i) => expect(Math.abs(v - want[i])).toBeLessThan(1e-4));
  }
}

describe("tuning during the app's own inference", () => {
  let gateway: FakeGateway | undefined;
  afterEach(async () => { await gateway?.stop(); gateway = undefined; });

  it("never makes a wrong candidate the incumbent, and reports only kernels it checked", async () => {
    gateway = await FakeGateway.start({
      initial: () => ({ artifact: naiveMatmulArtifact("k-initial", [M, K, N]), fromZoo: false }),
      // off by 1%: a kernel that would look fine to a loose check, and is no slower than the others
      offers: [naiveMatmulArtifact("k-wrong", [M, K, N], 1.01), naiveMatmulArtifact("k-right", [M, K, N])],
    });
    const model = await loadModel(matmulModel(), { gateway: gateway.url, fingerprint: "test-device", tuning: { budget: 1 } });
    await runUntilSettled(model);
    await model.close();
    const [op] = model.stats().ops;
    expect(model.stats().settled).toBe(true);
    expect(op.history.map((h) => h.kernelId)).not.toContain("k-wrong");
    expect(op.kernelId).not.toBe("k-wrong");
    expect(op.refused).toBe(1);
    expect(gateway.acked).toHaveLength(1);
    const ranked = gateway.acked[0].ranked.map((r) => r.kernelId);
    expect(ranked).not.toContain("k-wrong");
    expect(ranked).toContain("k-initial");
  });

  it("refuses a wrong Welcome kernel before the first run (tried on seeded inputs) and runs the reference instead", async () => {
    gateway = await FakeGateway.start({ initial: () => ({ artifact: naiveMatmulArtifact("k-bad-default", [M, K, N], 2), fromZoo: true }), offers: [] });
    const model = await loadModel(matmulModel(), { gateway: gateway.url, fingerprint: "test-device" });
    await runUntilSettled(model, 5);
    expect(model.stats().ops[0].kernelId).toBe("reference");
    expect(model.stats().ops[0].refused).toBe(1);
    await model.close();
  });

  it("runs on the reference kernels, and says why, when the gateway cannot be reached", async () => {
    const model = await loadModel(matmulModel(), { gateway: "ws://127.0.0.1:1/v1/session", client: { connectTimeoutMs: 2000 } });
    await runUntilSettled(model, 2);
    expect(model.stats().ops[0].source).toBe("reference");
    expect(model.stats().notes.join(" ")).toMatch(/the gateway did not answer .*cannot connect/);
  });
});
