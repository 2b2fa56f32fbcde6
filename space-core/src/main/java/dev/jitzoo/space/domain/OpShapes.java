package dev.jitzoo.space.domain;

import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;

/** Reads and checks the dimensions of an op, so that every caller sees the same rules. */
public record OpShapes(OpKind kind, int batch, int m, int k, int n) {

    /** Checks an op and names its dimensions; throws {@link InvalidOpException} with the reason. */
    public static OpShapes of(OpSpec op) {
        if (!OpRules.isMatmul(op.getKind()) && !OpRules.hasCompactWeights(op.getKind())) {
            throw new InvalidOpException(OpRules.rank(op.getKind()) < 0 ? "unknown op kind " + op.getKindValue()
                    : op.getKind() + " is not a matmul");
        }
        String problem = OpRules.problem(op, OpRules.MAX_OPERAND_ELEMENTS); // the gateway's and the zoo's rules, and caps
        if (problem != null) {
            throw new InvalidOpException(problem);
        }
        int off = OpRules.rank(op.getKind()) - 3;
        return new OpShapes(op.getKind(), off == 1 ? op.getShape(0) : 1,
                op.getShape(off), op.getShape(off + 1), op.getShape(off + 2));
    }

    /** An extent rounded up to a power of two: the largest tile side worth trying along it. */
    public static int padded(int extent) {
        return extent <= 1 ? 1 : Integer.highestOneBit(extent - 1) << 1;
    }

    /** a / b rounded up, for positive a and b. */
    public static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    /** Floating-point operations of one run. */
    public long flops() {
        return 2L * batch * m * k * n;
    }
}
