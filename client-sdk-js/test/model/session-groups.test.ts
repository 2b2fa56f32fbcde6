import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionLimit } from "../../src/gen/jitzoo/gateway/v1/gateway_pb.js";
import { OpKind, OpSpecSchema } from "../../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { sessionGroups } from "../../src/model/session.js";

const slot = (m: number, instances: number) =>
  ({ key: `m${m}x${instances}`, op: create(OpSpecSchema, { kind: OpKind.MATMUL, shape: [m, 64, 64] }), instances });

describe("a model's gateway sessions (both backends)", () => {
  it("asks for the ops that take the most time first, counting every instance, and at most the session limit per Hello", () => {
    const slots = Array.from({ length: 20 }, (_, i) => slot(i + 1, i % 3 === 0 ? 4 : 1));
    const groups = sessionGroups(slots);
    expect(groups.map((g) => g.length)).toEqual([SessionLimit.OPS_PER_HELLO, 20 - SessionLimit.OPS_PER_HELLO]);
    const time = (s: ReturnType<typeof slot>) => s.op.shape[0] * s.instances;
    const order = groups.flat().map(time);
    expect(order).toEqual([...order].sort((a, b) => b - a));
    expect(groups[0][0].key).toBe("m19x4"); // 19 rows, four times, before 20 rows once
    expect(slots[0].key).toBe("m1x4"); // the model's own list is left as it was
  });
});
