package dev.jitzoo.compiler.kernel;

import dev.jitzoo.proto.rules.OpRules;
import java.util.Arrays;
import java.util.Optional;

/**
 * Tensor operations the compiler knows. Their ABI names, ranks and which are matmuls come from
 * {@link OpRules} (the proto jar), the rules the gateway, the space and the zoo read ops by.
 */
public enum OpKind {
    /** C[M,N] = A[M,K] x B[K,N]; shape [M, K, N]. */
    MATMUL(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_MATMUL, "[M, K, N]"),
    /** C[b,M,N] = A[b,M,K] x B[b,K,N] for each b; shape [batch, M, K, N]. */
    BATCH_MATMUL(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_BATCH_MATMUL, "[batch, M, K, N]"),
    /** C = A + B, element by element; shape [n]. */
    ADD(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_ADD, "[n]"),
    /** C = A * B, element by element; shape [n]. */
    MUL(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_MUL, "[n]"),
    /** C[i,:] = softmax(A[i,:]), over the last axis; shape [rows, cols]. */
    SOFTMAX(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_SOFTMAX, "[rows, cols]"),
    /** C[i,:] = (A[i,:] - mean) / sqrt(variance + 1e-5) * Gamma + Beta, over the last axis; shape [rows, cols]. */
    LAYER_NORM(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_LAYER_NORM, "[rows, cols]"),
    /** C[M,N] = AScale * BScale[n] * sum_k (A[M,K] - AZero) * B[K,N], A uint8, B int8; shape [M, K, N]. */
    MATMUL_INT8(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_MATMUL_INT8, "[M, K, N]"),
    /** C[M,N] = sum_k A[M,K] * (B[k,n] - BZero[n,k/32]) * BScale[n,k/32], B 4-bit in blocks of 32 along K; shape [M, K, N]. */
    MATMUL_Q4(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_MATMUL_Q4, "[M, K, N]"),
    /** C[M,N] = A[M,K] x B[K,N], B float16 (widened in the kernel); shape [M, K, N]. */
    MATMUL_F16(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_MATMUL_F16, "[M, K, N]"),
    /** C[n, m, y, x] = the window of X [N, C, H, W] at (y, x) times filter m of W [M, C / group, KH, KW]; shape [N, C, H, W, M, KH, KW]. */
    CONV(dev.jitzoo.proto.kernel.v1.OpKind.OP_KIND_CONV, "[N, C, H, W, M, KH, KW]");

    /** The kind on the wire. */
    public final dev.jitzoo.proto.kernel.v1.OpKind wire;
    /** Name in the ABI metadata and in kernel ids; also the exported entry's name. */
    public final String abiName;
    public final int rank;
    /** What the dimensions mean, in order, for error messages. */
    public final String dimensionNames;
    /** Whether it is a (batch) matmul: register-tiled, with B layouts and fused epilogues. */
    public final boolean matmul;
    /** Whether it is a product over quantized weights (int8, 4-bit; float scales): its own emitter, B always packed. */
    public final boolean quantized;
    /** Whether its weights are held compact (int8, 4-bit, float16) and widened in the kernel: its own emitter, B as stored. */
    public final boolean compactWeights;

    OpKind(dev.jitzoo.proto.kernel.v1.OpKind wire, String dimensionNames) {
        this.wire = wire;
        this.abiName = OpRules.name(wire);
        this.rank = OpRules.rank(wire);
        this.dimensionNames = dimensionNames;
        this.matmul = OpRules.isMatmul(wire);
        this.quantized = OpRules.isQuantized(wire);
        this.compactWeights = OpRules.hasCompactWeights(wire);
    }

    /** The compiler's kind of a wire kind, if it knows it. */
    public static Optional<OpKind> of(dev.jitzoo.proto.kernel.v1.OpKind wire) {
        return Arrays.stream(values()).filter(k -> k.wire == wire).findFirst();
    }
}
