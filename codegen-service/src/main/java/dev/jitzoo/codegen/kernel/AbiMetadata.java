package dev.jitzoo.codegen.kernel;

import java.util.List;

/** The ABI v1 metadata of a kernel as JSON, keys in a fixed order (docs/kernel-abi.md). */
final class AbiMetadata {

    /** Parameter order of every matmul entry: the byte offsets of A, B and C. */
    static final List<String> OPERANDS = List.of("A", "B", "C");

    private AbiMetadata() {
    }

    static String json(Op op, Schedule s, int abiVersion) {
        boolean batched = op.kind() == OpKind.BATCH_MATMUL;
        JsonObjectWriter shapes = new JsonObjectWriter()
                .putInts("A", batched ? List.of(op.batch(), op.m(), op.k()) : List.of(op.m(), op.k()))
                .putInts("B", batched ? List.of(op.batch(), op.k(), op.n()) : List.of(op.k(), op.n()))
                .putInts("C", batched ? List.of(op.batch(), op.m(), op.n()) : List.of(op.m(), op.n()));
        JsonObjectWriter schedule = new JsonObjectWriter()
                .put("x0", s.x0()).put("y0", s.y0()).put("r0", s.r0())
                .put("x1", s.x1()).put("y1", s.y1()).put("r1", s.r1())
                .put("vectorize", s.vectorize()).put("unroll", s.unroll());
        return new JsonObjectWriter()
                .put("abi", abiVersion)
                .put("op", op.kind().abiName)
                .putInts("shape", op.dims())
                .put("entry", op.kind().abiName)
                .putStrings("operands", OPERANDS)
                .put("operandShapes", shapes)
                .put("schedule", schedule)
                .put("flops", op.flops())
                .toString();
    }
}
