package dev.jitzoo.codegen.kernel;

/** Tensor operations the compiler knows, with the rank of their shape and their ABI names. */
public enum OpKind {
    /** C[M,N] = A[M,K] x B[K,N]; shape [M, K, N]. */
    MATMUL("matmul", 3, "[M, K, N]"),
    /** C[b,M,N] = A[b,M,K] x B[b,K,N] for each b; shape [batch, M, K, N]. */
    BATCH_MATMUL("batch_matmul", 4, "[batch, M, K, N]");

    /** Name in the ABI metadata and in kernel ids; also the exported entry's name. */
    public final String abiName;
    public final int rank;
    /** What the dimensions mean, in order, for error messages. */
    public final String dimensionNames;

    OpKind(String abiName, int rank, String dimensionNames) {
        this.abiName = abiName;
        this.rank = rank;
        this.dimensionNames = dimensionNames;
    }
}
