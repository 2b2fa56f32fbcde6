package dev.jitzoo.codegen.kernel;

/** Tensor operations the compiler knows, with the rank of their shape and their ABI names. */
public enum OpKind {
    /** C[M,N] = A[M,K] x B[K,N]; shape [M, K, N]. */
    MATMUL("matmul", 3, "[M, K, N]", true),
    /** C[b,M,N] = A[b,M,K] x B[b,K,N] for each b; shape [batch, M, K, N]. */
    BATCH_MATMUL("batch_matmul", 4, "[batch, M, K, N]", true),
    /** C = A + B, element by element; shape [n]. */
    ADD("add", 1, "[n]", false),
    /** C = A * B, element by element; shape [n]. */
    MUL("mul", 1, "[n]", false),
    /** C[i,:] = softmax(A[i,:]), over the last axis; shape [rows, cols]. */
    SOFTMAX("softmax", 2, "[rows, cols]", false),
    /** C[i,:] = (A[i,:] - mean) / sqrt(variance + 1e-5) * Gamma + Beta, over the last axis; shape [rows, cols]. */
    LAYER_NORM("layer_norm", 2, "[rows, cols]", false);

    /** Name in the ABI metadata and in kernel ids; also the exported entry's name. */
    public final String abiName;
    public final int rank;
    /** What the dimensions mean, in order, for error messages. */
    public final String dimensionNames;
    /** Whether it is a (batch) matmul: register-tiled, with B layouts and fused epilogues. */
    public final boolean matmul;

    OpKind(String abiName, int rank, String dimensionNames, boolean matmul) {
        this.abiName = abiName;
        this.rank = rank;
        this.dimensionNames = dimensionNames;
        this.matmul = matmul;
    }
}
