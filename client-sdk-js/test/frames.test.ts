import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClientFrameSchema } from "../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { Backend, OpKind } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";

describe("frames", () => {
  it("round-trip a Hello through binary protobuf", () => {
    const hello = create(ClientFrameSchema, {
      frame: { case: "hello", value: {
        protocolVersion: 1, backend: Backend.WASM, credits: 4,
        device: { fingerprint: "fp", wasm: { simd: true } },
        ops: [{ kind: OpKind.MATMUL, shape: [128, 256, 96] }],
      } },
    });
    const back = fromBinary(ClientFrameSchema, toBinary(ClientFrameSchema, hello));
    expect(back.frame.case).toBe("hello");
    if (back.frame.case !== "hello") return;
    expect(back.frame.value.ops[0].shape).toEqual([128, 256, 96]);
    expect(back.frame.value.device?.fingerprint).toBe("fp");
  });
});
