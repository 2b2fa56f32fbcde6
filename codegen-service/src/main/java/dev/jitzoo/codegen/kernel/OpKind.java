package dev.jitzoo.codegen.kernel;

/** Tensor operations the compiler knows, with the rank of their shape and their ABI names. */
public enum OpKind {
    /** C[M,N] = A[M,K] x B[K,N]; shape [M, K, N]. */
    MATMUL("matmul", 3),
    /** C[b,M,N] = A[b,M,K] x B[b,K,N]; shape [batch, M, K, N]. */
    BATCH_MATMUL("batch_matmul", 4);

    public final String abiName;
    public final int rank;

    OpKind(String abiName, int rank) {
        this.abiName = abiName;
        this.rank = rank;
    }
}
