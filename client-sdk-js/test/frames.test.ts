import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClientFrameSchema, ErrorCode, ServerFrameSchema } from "../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, OpKind } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";

describe("frames", () => {
  it("round-trip a Hello through binary protobuf", () => {
    const hello = create(ClientFrameSchema, {
      frame: { case: "hello", value: {
        protocolVersion: 1, backend: Backend.WASM, credits: 4,
        device: { fingerprint: "fp", wasm: { simd: true }, userAgent: "ua", logicalCores: 8 },
        ops: [{ kind: OpKind.MATMUL, shape: [128, 256, 96] }],
      } },
    });
    const back = fromBinary(ClientFrameSchema, toBinary(ClientFrameSchema, hello));
    expect(back).toEqual(hello);
    if (back.frame.case !== "hello") throw new Error("not a hello");
    expect(back.frame.value.ops[0].shape).toEqual([128, 256, 96]);
    expect(back.frame.value.device?.fingerprint).toBe("fp");
  });

  it("round-trip a Report with ranked kernels", () => {
    const report = create(ClientFrameSchema, {
      frame: { case: "report", value: {
        op: { kind: OpKind.MATMUL, shape: [2, 3, 4] },
        ranked: [{ kernelId: "k1a", medianMs: 0.25, samples: 7, maxRelError: 1e-7 }, { kernelId: "k1b", medianMs: 0.5, samples: 7 }],
      } },
    });
    expect(fromBinary(ClientFrameSchema, toBinary(ClientFrameSchema, report))).toEqual(report);
  });

  it("round-trip server frames: Welcome with a Wasm artifact, and Error", () => {
    const welcome = create(ServerFrameSchema, {
      frame: { case: "welcome", value: {
        sessionId: "s1",
        initial: [{ fromZoo: true, artifact: { ref: { kernelId: "k1" }, code: { case: "wasm", value: new Uint8Array([0, 0x61, 0x73, 0x6d]) }, metadataJson: "{}" } }],
      } },
    });
    expect(fromBinary(ServerFrameSchema, toBinary(ServerFrameSchema, welcome))).toEqual(welcome);
    const error = create(ServerFrameSchema, { frame: { case: "error", value: { code: ErrorCode.INVALID_REPORT, message: "no" } } });
    expect(fromBinary(ServerFrameSchema, toBinary(ServerFrameSchema, error))).toEqual(error);
  });

  it("fails to decode garbage", () => {
    expect(() => fromBinary(ServerFrameSchema, new Uint8Array([0xff, 0xff, 0xff]))).toThrow();
  });
});
