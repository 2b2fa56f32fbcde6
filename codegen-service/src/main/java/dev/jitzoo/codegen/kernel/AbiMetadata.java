package dev.jitzoo.codegen.kernel;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The ABI v1 metadata of a kernel as JSON, keys in a fixed order (see docs/kernel-abi.md). */
final class AbiMetadata {

    private AbiMetadata() {
    }

    static String json(Op op, Schedule s, int abiVersion) {
        int[] a = op.kind() == OpKind.BATCH_MATMUL ? new int[] {op.batch(), op.m(), op.k()} : new int[] {op.m(), op.k()};
        int[] b = op.kind() == OpKind.BATCH_MATMUL ? new int[] {op.batch(), op.k(), op.n()} : new int[] {op.k(), op.n()};
        int[] c = op.kind() == OpKind.BATCH_MATMUL ? new int[] {op.batch(), op.m(), op.n()} : new int[] {op.m(), op.n()};
        return "{\"abi\":" + abiVersion
                + ",\"op\":\"" + op.kind().abiName + "\""
                + ",\"shape\":" + list(op.dims())
                + ",\"entry\":\"" + op.kind().abiName + "\""
                + ",\"operands\":[\"A\",\"B\",\"C\"]"
                + ",\"operandShapes\":{\"A\":" + list(a) + ",\"B\":" + list(b) + ",\"C\":" + list(c) + "}"
                + ",\"inputs\":[\"A\",\"B\"],\"outputs\":[\"C\"]"
                + ",\"schedule\":{\"x0\":" + s.x0() + ",\"y0\":" + s.y0() + ",\"r0\":" + s.r0()
                + ",\"x1\":" + s.x1() + ",\"y1\":" + s.y1() + ",\"r1\":" + s.r1()
                + ",\"vectorize\":" + s.vectorize() + ",\"unroll\":" + s.unroll() + "}"
                + ",\"flops\":" + op.flops() + "}";
    }

    private static String list(int[] values) {
        return Arrays.stream(values).mapToObj(String::valueOf).collect(Collectors.joining(",", "[", "]"));
    }
}
