package dev.jitzoo.compiler.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.compiler.wasm.ModuleWalker;
import dev.jitzoo.compiler.wasm.passes.Pass;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import dev.jitzoo.compiler.wgsl.WgslLimits;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Split kernels (ABI v2): what sets them apart in the artifact. They run (every op kind, every
 * worker count from 1 to 4, share by share and on real threads) in V8 through the harness, in
 * {@code ./jitzoo test}: wasmtime-java here has no shared memory.
 */
class SplitKernelTest {

    private final WasmCompiler compiler = new WasmCompiler();
    private final Schedule tile = Schedule.registerTile(4, 16, true, 2).withPackB(true);

    @Test
    void aSplitKernelImportsASharedMemoryAndTakesItsRangeAfterTheOperands() {
        GeneratedKernel kernel = compiler.compile(Op.batchMatmul(3, 7, 13, 5), tile.withSplit(Split.rows(3)));
        ModuleWalker.Parsed module = ModuleWalker.parse(kernel.wasm());
        assertEquals(List.of(new ModuleWalker.Import("env", "memory", 2, 3, 1)), module.imports());
        assertEquals(List.of("(i32,i32,i32,i32,i32)->()", "(i32,i32)->()"), module.functionTypes());
        assertEquals(List.of(new ModuleWalker.Export("batch_matmul", 0, 0), new ModuleWalker.Export("pack_b", 0, 1)),
                module.exports());
    }

    @Test
    @SuppressWarnings("unchecked")
    void metadataSaysAbi2AndTheSplitWithItsUnits() {
        // 7 rows in bands of 3: 3 bands per batch, the last of 1 row; 3 batches
        GeneratedKernel kernel = compiler.compile(Op.batchMatmul(3, 7, 13, 5), tile.withSplit(Split.rows(3)));
        Map<String, Object> meta = MiniJson.object(kernel.metadataJson());
        assertEquals(2L, meta.get("abi"));
        assertEquals(Map.of("axis", "rows", "grain", 3L, "units", 9L), meta.get("split"));
        assertEquals(Map.of("axis", "rows", "grain", 3L), ((Map<String, Object>) meta.get("schedule")).get("split"));
        Map<String, Object> rows = MiniJson.object(compiler.compile(new Op(OpKind.SOFTMAX, 10, 6),
                Schedule.registerTile(0, 0, true, 0).withSplit(Split.rows(4))).metadataJson());
        assertEquals(Map.of("axis", "rows", "grain", 4L, "units", 3L), rows.get("split"));
    }

    @Test
    void theSplitEntersTheIdAndUnsplitKernelsKeepTheirs() {
        Op op = Op.matmul(7, 13, 5);
        Schedule plain = Schedule.registerTile(2, 4, true, 0);
        assertEquals("k13fbd204313c7c9ab8e7e737a8a5a4e", compiler.compile(op, plain).kernelId(), "the documented v1 id");
        assertEquals("abi=2;backend=WASM;op=matmul;shape=7,13,5;schedule=4,2,0,0,0,0,true,0;split=rows:2",
                KernelIds.canonical(op, plain.withSplit(Split.rows(2)), Backend.WASM, 2, Pass.ALL));
        String two = compiler.compile(op, plain.withSplit(Split.rows(2))).kernelId();
        String four = compiler.compile(op, plain.withSplit(Split.rows(4))).kernelId();
        assertNotEquals(two, four);
        assertEquals(KernelIds.hash("abi=2;backend=WASM;op=matmul;shape=7,13,5;schedule=4,2,0,0,0,0,true,0;split=rows:2"), two);
    }

    @Test
    void aGrainThatDividesTheRowsNeedsOneBodyAndOneThatDoesNotTwo() {
        Op op = Op.matmul(64, 64, 64);
        int whole = compiler.compile(op, tile).wasm().length;
        int even = compiler.compile(op, tile.withSplit(Split.rows(16))).wasm().length;
        int ragged = compiler.compile(op, tile.withSplit(Split.rows(24))).wasm().length;
        assertTrue(even < whole * 1.5, "one band's code: " + even + " bytes beside " + whole);
        assertTrue(ragged > even * 1.5, "a band's code and the last band's: " + ragged + " bytes beside " + even);
    }

    @Test
    @SuppressWarnings("unchecked")
    void aOneRowMatmulSplitsByColumnsOfWholePanels() {
        // a decode step's product: 1 x 64 x 40, B packed in panels of 16 columns; two units of 32 columns, the last 8
        Op op = new Op(OpKind.MATMUL, List.of(1, 64, 40), false, false, List.of(Epilogue.of(Epilogue.Kind.BIAS)), 0f);
        GeneratedKernel kernel = compiler.compile(op, tile.withSplit(Split.columns(32)));
        Map<String, Object> meta = MiniJson.object(kernel.metadataJson());
        assertEquals(2L, meta.get("abi"));
        assertEquals(Map.of("axis", "columns", "grain", 32L, "units", 2L), meta.get("split"));
        assertEquals(Map.of("axis", "columns", "grain", 32L), ((Map<String, Object>) meta.get("schedule")).get("split"));
        assertEquals(List.of("(i32,i32,i32,i32,i32,i32)->()", "(i32,i32)->()"), ModuleWalker.parse(kernel.wasm()).functionTypes());
        assertTrue(KernelIds.canonical(op, tile.withSplit(Split.columns(32)), Backend.WASM, 2, Pass.ALL).endsWith(";split=columns:32"));
        // columns are for one row, B packed, whole panels
        assertTrue(assertThrows(InvalidKernelException.class, () -> compiler.compile(Op.matmul(2, 64, 40), tile.withSplit(Split.columns(32))))
                .getMessage().contains("one-row matmul"));
        assertTrue(assertThrows(InvalidKernelException.class, () -> compiler.compile(op, tile.withPackB(false).withSplit(Split.columns(32))))
                .getMessage().contains("reads B packed"));
        assertTrue(assertThrows(InvalidKernelException.class, () -> compiler.compile(op, tile.withSplit(Split.columns(24))))
                .getMessage().contains("whole x0 = 16 column panels"));
    }

    @Test
    void badSplitsAreRefusedWithTheReason() {
        Op op = Op.matmul(7, 13, 5);
        Schedule plain = Schedule.registerTile(2, 4, true, 0);
        assertTrue(assertThrows(InvalidKernelException.class, () -> compiler.compile(op, plain.withSplit(Split.rows(8))))
                .getMessage().contains("exceeds the 7 rows"));
        assertTrue(assertThrows(InvalidKernelException.class, () -> Split.rows(0)).getMessage().contains("at least 1"));
        assertTrue(assertThrows(InvalidKernelException.class, () -> new Split(Split.Axis.NONE, 4)).getMessage()
                .contains("needs a split axis"));
        assertTrue(assertThrows(InvalidKernelException.class, () -> new WgslCompiler().compile(op,
                Schedule.registerTile(2, 4, true, 0).withSplit(Split.rows(2)), WgslLimits.WEBGPU_DEFAULTS))
                .getMessage().contains("split is a Wasm schedule primitive"));
    }
}
