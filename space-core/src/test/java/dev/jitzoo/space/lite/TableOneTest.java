package dev.jitzoo.space.lite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Table 1's formulas against values worked out by hand from the paper's definitions. */
class TableOneTest {

    @Test
    void registersOfOneThreadsTile() {
        // x0·r0 + r0·y0 + x0·y0 = 8·1 + 1·4 + 8·4
        assertEquals(44, TableOne.regThread(8, 4, 1));
        // 4·2 + 2·8 + 4·8
        assertEquals(56, TableOne.regThread(4, 8, 2));
        // Wasm counts v128s: a 4x8 tile is 2 vectors wide; 2·1 + 1·4 + 2·4
        assertEquals(14, TableOne.regThread(2, 4, 1));
    }

    @Test
    void l1OfOneBlock() {
        // x1·r1 + r1·y1 + x1·y1 = 64·16 + 16·32 + 64·32
        assertEquals(3584, TableOne.l1Block(64, 32, 16));
        // only A and B are staged: 4 bytes · (64·16 + 16·32)
        assertEquals(6144, TableOne.stagedBytes(64, 32, 16));
    }

    @Test
    void threadsAndWarpsOfOneBlock() {
        // (x1/x0)·(y1/y0) = (64/8)·(32/4)
        assertEquals(64, TableOne.threadBlock(8, 4, 64, 32));
        assertEquals(2.0, TableOne.warpBlock(64, 32));
        assertEquals(0.5, TableOne.warpBlock(16, 32));
    }

    @Test
    void blocksPerCoreIsTheLeastOfTheThreeLimits() {
        // Ampere SM: 65536 registers, 128 KiB L1, 48 warps. Reg_thread 44, 64 threads, 14336 B, 2 warps:
        // RegLimit = 65536 / (44·64) = 23.27 -> 23; L1Limit = 131072 / 14336 = 9.14 -> 9; WarpLimit = 48 / 2 = 24
        TableOne.BlocksPerCore b = TableOne.BlocksPerCore.of(44, 64, 14336, 2.0, 65536, 131072, 48);
        assertEquals(23, b.regLimit());
        assertEquals(9, b.l1Limit());
        assertEquals(24, b.warpLimit());
        assertEquals(9, b.blockCore());
        assertFalse(b.registersBind(0.85), "L1 binds, far below RegLimit");
        // nothing staged: WarpLimit 24 is the other limit; 0.85·24 = 20.4 <= 23 <= 24 / 0.85 = 28.2
        TableOne.BlocksPerCore unstaged = TableOne.BlocksPerCore.of(44, 64, 0, 2.0, 65536, 131072, 48);
        assertEquals(Long.MAX_VALUE, unstaged.l1Limit());
        assertEquals(23, unstaged.blockCore());
        assertTrue(unstaged.registersBind(0.85));
        assertFalse(unstaged.registersBind(1.0), "exactly: Block_core = RegLimit = 23, but WarpLimit 24 is not equal");
    }

    @Test
    void aBlockOfHalfAWarpStillTakesAWholeWarp() {
        // 16 threads = 0.5 warps of 32, but a block occupies whole warps: WarpLimit = 48 / 1
        assertEquals(48, TableOne.BlocksPerCore.of(10, 16, 0, 0.5, 65536, 131072, 48).warpLimit());
    }
}
