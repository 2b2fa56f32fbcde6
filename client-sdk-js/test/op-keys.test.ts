import { create } from "@bufbuild/protobuf";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EpilogueKind, OpKind, OpSpecSchema, type OpSpec } from "../src/gen/jitzoo/kernel/v1/kernel_pb.js";
import { keyNumber, opKey } from "../src/ops.js";

// The list Java's OpRules.key is held to as well: one key per op, in both languages.
const LIST = new URL("../../proto/src/test/resources/op-keys.tsv", import.meta.url);

const bits = (hex: string): number => new Float32Array(Uint32Array.of(Number.parseInt(hex.slice(2), 16)).buffer)[0];

function opOf([kind, shape, flags, epilogue, epsilon]: string[]): OpSpec {
  const w = flags.startsWith("conv=") ? flags.slice("conv=".length).split(",").map(Number) : undefined;
  return create(OpSpecSchema, {
    conv: w && { strideH: w[0], strideW: w[1], dilationH: w[2], dilationW: w[3], padTop: w[4], padLeft: w[5], padBottom: w[6], padRight: w[7], group: w[8] },
    kind: OpKind[kind.toUpperCase() as keyof typeof OpKind],
    shape: shape.split(",").map(Number),
    transposeB: flags === "transposeB",
    broadcastB: flags === "broadcastB",
    epilogue: epilogue === "-" ? [] : epilogue.split(",").map((step) => {
      const [name, value] = step.split(":");
      return { kind: EpilogueKind[name.toUpperCase() as keyof typeof EpilogueKind], value: value ? bits(value) : 0 };
    }),
    epsilon: epsilon === "0" ? 0 : bits(epsilon),
  });
}

describe("op keys", () => {
  it("writes every key the shared list has, as OpRules.key does", () => {
    const rows = readFileSync(LIST, "utf8").split("\n").filter((l) => l.trim() && !l.startsWith("#")).map((l) => l.split("\t"));
    expect(rows.length).toBeGreaterThanOrEqual(20);
    for (const row of rows) expect(opKey(opOf(row)), row.join(" ")).toBe(row[5]);
  });

  it("writes a float as the shortest decimal that reads back as the same float", () => {
    expect(keyNumber(0.125)).toBe("0.125");
    expect(keyNumber(1e-12)).toBe("1.0E-12");
    expect(keyNumber(-0)).toBe("-0.0");
    const f = new Float32Array(1), u = new Uint32Array(f.buffer);
    for (let b = 0x3f800000; b < 0x3f800000 + 100_000; b += 7) {
      u[0] = b;
      expect(Math.fround(Number(keyNumber(f[0])))).toBe(f[0]);
    }
  });
});
