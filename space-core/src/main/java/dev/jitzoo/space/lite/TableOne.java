package dev.jitzoo.space.lite;

/**
 * Table 1 of the nnJIT paper: the hardware resources one tiling uses, and how many blocks of it
 * share a core. Tile sizes follow the paper's Fig. 10: {@code x0, y0, r0} the tile one thread holds
 * in registers, {@code x1, y1, r1} the tile one block holds in L1 / shared memory.
 */
public final class TableOne {

    private TableOne() {
    }

    /** Reg_thread = x0·r0 + r0·y0 + x0·y0: the B, A and C values one thread's tile keeps in registers. */
    public static long regThread(long x0, long y0, long r0) {
        return x0 * r0 + r0 * y0 + x0 * y0;
    }

    /** L1_block = x1·r1 + r1·y1 + x1·y1, in elements (times 4 for float32 bytes). */
    public static long l1Block(long x1, long y1, long r1) {
        return x1 * r1 + r1 * y1 + x1 * y1;
    }

    /**
     * The part of L1_block a WGSL kernel stages in workgroup memory, in bytes: the A and B tiles,
     * 4·(x1·r1 + r1·y1). C's block stays in the threads' registers (counted by Reg_thread), so a
     * shared-memory budget is charged only for this.
     */
    public static long stagedBytes(long x1, long y1, long r1) {
        return 4 * (x1 * r1 + r1 * y1);
    }

    /** Thread_block = (x1/x0)·(y1/y0) on WebGPU; 1 on Wasm. */
    public static long threadBlock(long x0, long y0, long x1, long y1) {
        return (x1 / x0) * (y1 / y0);
    }

    /** Warp_block = Thread_block / WARP_WIDTH. */
    public static double warpBlock(long threadBlock, int warpWidth) {
        return (double) threadBlock / warpWidth;
    }

    /**
     * Blocks one core holds by each resource, and Block_core, the least of them:
     * RegLimit = TOTAL_REGS_PER_CORE / (Reg_thread·Thread_block), L1Limit = L1_SIZE_PER_CORE / L1_block,
     * WarpLimit = TOTAL_WARPS_PER_CORE / Warp_block (whole blocks: each quotient rounded down; a block
     * occupies whole warps, so Warp_block is rounded up first). L1_block and L1 size in bytes.
     */
    public record BlocksPerCore(long regLimit, long l1Limit, long warpLimit) {

        public static BlocksPerCore of(long regThread, long threadBlock, long l1BlockBytes, double warpBlock,
                                       long regsPerCore, long l1BytesPerCore, long warpsPerCore) {
            long regLimit = regsPerCore / (regThread * threadBlock);
            long l1Limit = l1BlockBytes == 0 ? Long.MAX_VALUE : l1BytesPerCore / l1BlockBytes;
            long warpLimit = warpsPerCore / (long) Math.ceil(warpBlock);
            return new BlocksPerCore(regLimit, l1Limit, warpLimit);
        }

        /** Block_core = min(RegLimit, L1Limit, WarpLimit). */
        public long blockCore() {
            return Math.min(regLimit, Math.min(l1Limit, warpLimit));
        }

        /**
         * Heuristic 7, Block_core = RegLimit: registers bound the blocks per core, and no other resource
         * is left far behind (each block uses its share of the register file). With relaxation ratio
         * {@code rho} the equality holds within that factor either way: rho·other ≤ RegLimit ≤ other/rho,
         * other = min(L1Limit, WarpLimit) (rho = 1: the exact rule).
         */
        public boolean registersBind(double rho) {
            long other = Math.min(l1Limit, warpLimit);
            return rho * other <= regLimit && regLimit <= other / rho;
        }
    }
}
