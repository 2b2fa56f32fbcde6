package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.FuncType;
import dev.jitzoo.compiler.wasm.Function;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.MemArg;
import dev.jitzoo.compiler.wasm.ModuleEncoder;
import dev.jitzoo.compiler.wasm.Opcode;
import dev.jitzoo.compiler.wasm.SimdOpcode;
import dev.jitzoo.compiler.wasm.ValType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

/**
 * The SDK's generic kernels: products whose shapes are given at call time, correct for any size,
 * that a model runs on before the gateway's kernels for its device are checked (a first inference
 * never waits for the network). One small module, built once when the SDK is built:
 *
 * <p>{@code matmul(a, b, c, m, k, n)}: C[m, n] = A[m, k] × B[k, n], row-major float32 at the
 * byte offsets given. Columns in panels of 8 (two f32x4 sums per row), the panel walked down every
 * row before the next (a panel of B stays in cache across the rows), rows in tiles of 4 then 1; the
 * columns past the last whole panel one at a time. Sums in float32, k in order.
 *
 * <p>{@code matmul_bt(a, b, c, m, k, n)}: C[m, n] = A[m, k] × B[n, k]ᵀ (B stored transposed, as
 * attention's keys are): each sum a dot product of two contiguous rows, f32x4 along k, in tiles of
 * 2 rows × 4 columns (then 1 and 1), the last k mod 4 one at a time.
 *
 * <p>The module imports {@code env.memory} like every kernel; {@link #module(boolean)} makes the
 * form for a shared memory (a model on threads) too. Not tuned: the BERT-base layer on them runs
 * at about half its tuned speed in V8 (147 against 75 ms in Chromium), some 30 times its float64
 * reference's.
 */
public final class GenericKernels {

    /** Columns of a panel: two f32x4 sums per row. */
    static final int PANEL = 8;
    /** Rows of the main tile. */
    static final int ROWS = 4;

    private GenericKernels() {
    }

    /** The module's bytes: importing an unshared memory, or a shared one (a model on threads). */
    public static byte[] module(boolean shared) {
        return new ModuleEncoder()
                .importMemory(WasmCompiler.MEMORY_MODULE, WasmCompiler.MEMORY_NAME, 1, shared)
                .function(new MatMul().build(), "matmul", true)
                .function(new MatMulTransposed().build(), "matmul_bt", true)
                .encode(WasmCompiler.MAX_KERNEL_BYTES);
    }

    /**
     * Writes the SDK's module of generic kernels: {@code GenericKernels <file.ts>} writes a
     * TypeScript module exporting both forms as base64 (the SDK's build runs it; the file is not
     * committed).
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: GenericKernels <output.ts>");
            System.exit(2);
        }
        Base64.Encoder base64 = Base64.getEncoder();
        String source = "// Written by the compiler (dev.jitzoo.compiler.kernel.GenericKernels) when the SDK is built: do not edit.\n"
                + "/** The generic kernels' module (base64): for an unshared memory, and for a shared one. */\n"
                + "export const GENERIC_KERNELS = {\n"
                + "  plain: \"" + base64.encodeToString(module(false)) + "\",\n"
                + "  shared: \"" + base64.encodeToString(module(true)) + "\",\n"
                + "};\n";
        Path out = Path.of(args[0]);
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        Files.writeString(out, source, StandardCharsets.UTF_8);
    }

    /** {@code matmul(a, b, c, m, k, n)}. */
    private static final class MatMul {
        private static final int A = 0, B = 1, C = 2, M = 3, K = 4, N = 5;
        private final FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(6));
        private final int i = f.local(ValType.I32), j = f.local(ValType.I32), p = f.local(ValType.I32);
        private final int rowBytes = f.local(ValType.I32), kBytes = f.local(ValType.I32), pb = f.local(ValType.I32);
        private final int[] pa = {f.local(ValType.I32), f.local(ValType.I32), f.local(ValType.I32), f.local(ValType.I32)};
        private final int pc = f.local(ValType.I32);
        private final int[][] acc = new int[ROWS][2];
        private final int b0 = f.local(ValType.V128), b1 = f.local(ValType.V128), av = f.local(ValType.V128);
        private final int sum = f.local(ValType.F32);

        MatMul() {
            for (int[] row : acc) {
                row[0] = f.local(ValType.V128);
                row[1] = f.local(ValType.V128);
            }
        }

        Function build() {
            f.localGet(N).i32Const(2).op(Opcode.I32_SHL).localSet(rowBytes);
            f.localGet(K).i32Const(2).op(Opcode.I32_SHL).localSet(kBytes);
            Loops.set(f, j, 0);
            // whole panels of columns
            whileBelow(f, j, PANEL, N, () -> {
                Loops.set(f, i, 0);
                whileBelow(f, i, ROWS, M, () -> {
                    tile(ROWS);
                    Loops.add(f, i, ROWS);
                });
                whileBelow(f, i, 1, M, () -> {
                    tile(1);
                    Loops.add(f, i, 1);
                });
                Loops.add(f, j, PANEL);
            });
            // the last columns, one at a time
            whileBelow(f, j, 1, N, () -> {
                Loops.set(f, i, 0);
                whileBelow(f, i, 1, M, () -> {
                    rowStart(0);
                    columnStart();
                    f.f32Const(0f).localSet(sum);
                    overK(() -> {
                        f.localGet(sum);
                        f.localGet(pa[0]).memory(Opcode.F32_LOAD, MemArg.floatAt(0));
                        f.localGet(pb).memory(Opcode.F32_LOAD, MemArg.floatAt(0));
                        f.op(Opcode.F32_MUL).op(Opcode.F32_ADD).localSet(sum);
                        Loops.add(f, pa[0], Float.BYTES);
                    });
                    outputAt(0);
                    f.localGet(pc).localGet(sum).memory(Opcode.F32_STORE, MemArg.floatAt(0));
                    Loops.add(f, i, 1);
                });
                Loops.add(f, j, 1);
            });
            return f.build();
        }

        /** C[i..i+rows, j..j+8] = A[i..i+rows, :] × B[:, j..j+8]. */
        private void tile(int rows) {
            for (int r = 0; r < rows; r++) {
                rowStart(r);
                f.f32x4Const(0f).localSet(acc[r][0]);
                f.f32x4Const(0f).localSet(acc[r][1]);
            }
            columnStart();
            overK(() -> {
                f.localGet(pb).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0)).localSet(b0);
                f.localGet(pb).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(16)).localSet(b1);
                for (int r = 0; r < rows; r++) {
                    f.localGet(pa[r]).memory(SimdOpcode.V128_LOAD32_SPLAT, MemArg.floatAt(0)).localSet(av);
                    f.localGet(acc[r][0]).localGet(av).localGet(b0).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(acc[r][0]);
                    f.localGet(acc[r][1]).localGet(av).localGet(b1).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(acc[r][1]);
                    Loops.add(f, pa[r], Float.BYTES);
                }
            });
            for (int r = 0; r < rows; r++) {
                outputAt(r);
                f.localGet(pc).localGet(acc[r][0]).memory(SimdOpcode.V128_STORE, MemArg.floatAt(0));
                f.localGet(pc).localGet(acc[r][1]).memory(SimdOpcode.V128_STORE, MemArg.floatAt(16));
            }
        }

        /** {@code pa[r]} = A's row i + r. */
        private void rowStart(int r) {
            f.localGet(A).localGet(i);
            if (r != 0) {
                f.i32Const(r).op(Opcode.I32_ADD);
            }
            f.localGet(kBytes).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localSet(pa[r]);
        }

        /** {@code pb} = B's column j in its first row. */
        private void columnStart() {
            f.localGet(B).localGet(j).i32Const(2).op(Opcode.I32_SHL).op(Opcode.I32_ADD).localSet(pb);
        }

        /** {@code pc} = C[i + r, j]. */
        private void outputAt(int r) {
            f.localGet(C).localGet(i);
            if (r != 0) {
                f.i32Const(r).op(Opcode.I32_ADD);
            }
            f.localGet(rowBytes).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localGet(j).i32Const(2).op(Opcode.I32_SHL).op(Opcode.I32_ADD).localSet(pc);
        }

        /** The body K times (K ≥ 1), B's pointer a row down after each. */
        private void overK(Runnable body) {
            Loops.repeat(f, Trips.inLocal(K), p, () -> {
                body.run();
                f.localGet(pb).localGet(rowBytes).op(Opcode.I32_ADD).localSet(pb);
            });
        }

    }

    /** {@code matmul_bt(a, b, c, m, k, n)}: B is [n, k]. */
    private static final class MatMulTransposed {
        private static final int A = 0, B = 1, C = 2, M = 3, K = 4, N = 5;
        private static final int TILE_ROWS = 2, TILE_COLUMNS = 4;
        private final FunctionBuilder f = new FunctionBuilder(FuncType.i32Params(6));
        private final int i = f.local(ValType.I32), j = f.local(ValType.I32), p = f.local(ValType.I32);
        private final int kBytes = f.local(ValType.I32), quads = f.local(ValType.I32), rest = f.local(ValType.I32), pc = f.local(ValType.I32);
        private final int[] pa = new int[TILE_ROWS], av = new int[TILE_ROWS], pb = new int[TILE_COLUMNS];
        private final int[][] acc = new int[TILE_ROWS][TILE_COLUMNS], sum = new int[TILE_ROWS][TILE_COLUMNS];
        private final int bv = f.local(ValType.V128);

        MatMulTransposed() {
            for (int r = 0; r < TILE_ROWS; r++) {
                pa[r] = f.local(ValType.I32);
                av[r] = f.local(ValType.V128);
                for (int c = 0; c < TILE_COLUMNS; c++) {
                    acc[r][c] = f.local(ValType.V128);
                    sum[r][c] = f.local(ValType.F32);
                }
            }
            for (int c = 0; c < TILE_COLUMNS; c++) {
                pb[c] = f.local(ValType.I32);
            }
        }

        Function build() {
            f.localGet(K).i32Const(2).op(Opcode.I32_SHL).localSet(kBytes);
            f.localGet(K).i32Const(2).op(Opcode.I32_SHR_U).localSet(quads);
            f.localGet(K).i32Const(3).op(Opcode.I32_AND).localSet(rest);
            Loops.set(f, j, 0);
            whileBelow(f, j, TILE_COLUMNS, N, () -> {
                rows(TILE_COLUMNS);
                Loops.add(f, j, TILE_COLUMNS);
            });
            whileBelow(f, j, 1, N, () -> {
                rows(1);
                Loops.add(f, j, 1);
            });
            return f.build();
        }

        /** Every row of C in columns j..j+columns. */
        private void rows(int columns) {
            Loops.set(f, i, 0);
            whileBelow(f, i, TILE_ROWS, M, () -> {
                tile(TILE_ROWS, columns);
                Loops.add(f, i, TILE_ROWS);
            });
            whileBelow(f, i, 1, M, () -> {
                tile(1, columns);
                Loops.add(f, i, 1);
            });
        }

        private void tile(int rows, int columns) {
            for (int r = 0; r < rows; r++) {
                rowOf(A, i, r, pa[r]);
                for (int c = 0; c < columns; c++) {
                    f.f32x4Const(0f).localSet(acc[r][c]);
                }
            }
            for (int c = 0; c < columns; c++) {
                rowOf(B, j, c, pb[c]);
            }
            Loops.repeat(f, Trips.inLocal(quads), p, () -> {
                for (int r = 0; r < rows; r++) {
                    f.localGet(pa[r]).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0)).localSet(av[r]);
                    Loops.add(f, pa[r], 4 * Float.BYTES);
                }
                for (int c = 0; c < columns; c++) {
                    f.localGet(pb[c]).memory(SimdOpcode.V128_LOAD, MemArg.floatAt(0)).localSet(bv);
                    Loops.add(f, pb[c], 4 * Float.BYTES);
                    for (int r = 0; r < rows; r++) {
                        f.localGet(acc[r][c]).localGet(av[r]).localGet(bv).simd(SimdOpcode.F32X4_MUL).simd(SimdOpcode.F32X4_ADD).localSet(acc[r][c]);
                    }
                }
            });
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < columns; c++) {
                    // lanes summed pairwise: (0 + 1) + (2 + 3)
                    f.localGet(acc[r][c]).f32x4ExtractLane(0).localGet(acc[r][c]).f32x4ExtractLane(1).op(Opcode.F32_ADD);
                    f.localGet(acc[r][c]).f32x4ExtractLane(2).localGet(acc[r][c]).f32x4ExtractLane(3).op(Opcode.F32_ADD);
                    f.op(Opcode.F32_ADD).localSet(sum[r][c]);
                }
            }
            Loops.repeat(f, Trips.inLocal(rest), p, () -> {
                for (int r = 0; r < rows; r++) {
                    for (int c = 0; c < columns; c++) {
                        f.localGet(sum[r][c]);
                        f.localGet(pa[r]).memory(Opcode.F32_LOAD, MemArg.floatAt(0));
                        f.localGet(pb[c]).memory(Opcode.F32_LOAD, MemArg.floatAt(0));
                        f.op(Opcode.F32_MUL).op(Opcode.F32_ADD).localSet(sum[r][c]);
                    }
                }
                for (int r = 0; r < rows; r++) {
                    Loops.add(f, pa[r], Float.BYTES);
                }
                for (int c = 0; c < columns; c++) {
                    Loops.add(f, pb[c], Float.BYTES);
                }
            });
            for (int r = 0; r < rows; r++) {
                // pc = C[i + r, j]
                f.localGet(C).localGet(i);
                if (r != 0) {
                    f.i32Const(r).op(Opcode.I32_ADD);
                }
                f.localGet(N).op(Opcode.I32_MUL).localGet(j).op(Opcode.I32_ADD).i32Const(2).op(Opcode.I32_SHL).op(Opcode.I32_ADD).localSet(pc);
                for (int c = 0; c < columns; c++) {
                    f.localGet(pc).localGet(sum[r][c]).memory(Opcode.F32_STORE, MemArg.floatAt((long) c * Float.BYTES));
                }
            }
        }

        /** {@code to} = the start of row {@code first + r} of a [?, k] operand at the parameter {@code base}. */
        private void rowOf(int base, int first, int r, int to) {
            f.localGet(base).localGet(first);
            if (r != 0) {
                f.i32Const(r).op(Opcode.I32_ADD);
            }
            f.localGet(kBytes).op(Opcode.I32_MUL).op(Opcode.I32_ADD).localSet(to);
        }
    }

    /** {@code while (counter + step <= limit) body}: the body moves the counter on. */
    private static void whileBelow(FunctionBuilder f, int counter, int step, int limit, Runnable body) {
        f.block().loop();
        f.localGet(counter).i32Const(step).op(Opcode.I32_ADD).localGet(limit).op(Opcode.I32_GT_U).brIf(1);
        body.run();
        f.br(0).end().end();
    }
}
