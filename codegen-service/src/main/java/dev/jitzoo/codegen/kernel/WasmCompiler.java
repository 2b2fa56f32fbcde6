package dev.jitzoo.codegen.kernel;

import dev.jitzoo.codegen.wasm.KernelTooLargeException;
import dev.jitzoo.codegen.wasm.ModuleEncoder;

/** op + schedule → a Wasm kernel module following ABI v1 (docs/kernel-abi.md). Thread-safe. */
public final class WasmCompiler {

    public static final int ABI_VERSION = 1;
    public static final String ABI_SECTION = "jitzoo.abi";
    /** Size budget per kernel. */
    public static final int MAX_KERNEL_BYTES = 32 * 1024;
    /** Accumulators a register tile may hold: x86-64 V8 has 16 SIMD registers, some go to B and A. */
    public static final int MAX_ACCUMULATORS = 16;

    public GeneratedKernel compile(Op op, Schedule schedule) {
        long start = System.nanoTime();
        check(schedule);
        String metadata = AbiMetadata.json(op, schedule, ABI_VERSION);
        byte[] wasm;
        try {
            wasm = ModuleEncoder.encode(3, new MatMulEmitter(op, schedule).emit(), op.kind().abiName,
                    ABI_SECTION, metadata, MAX_KERNEL_BYTES);
        } catch (KernelTooLargeException e) {
            throw new InvalidKernelException(e.getMessage() + "; choose a smaller tile or unroll factor");
        }
        String id = KernelIds.of(op, schedule, Backend.WASM, ABI_VERSION);
        return new GeneratedKernel(id, wasm, metadata, System.nanoTime() - start);
    }

    static void check(Schedule s) {
        if (s.y0() < 1 || s.y0() > 8) {
            throw new InvalidKernelException("y0 must be 1 to 8 rows, got " + s.y0());
        }
        if (s.x0() < 1 || s.x0() > 32) {
            throw new InvalidKernelException("x0 must be 1 to 32 columns, got " + s.x0());
        }
        if (s.vectorize() && s.x0() % 4 != 0) {
            throw new InvalidKernelException("a vectorized x0 must be a multiple of 4, got " + s.x0());
        }
        int accumulators = s.y0() * (s.vectorize() ? s.x0() / 4 : s.x0());
        if (accumulators > MAX_ACCUMULATORS) {
            throw new InvalidKernelException("register tile " + s.y0() + "x" + s.x0() + " needs " + accumulators
                    + " accumulators; at most " + MAX_ACCUMULATORS + " fit the registers");
        }
        if (s.unroll() < 0 || s.unroll() > 16) {
            throw new InvalidKernelException("unroll must be 0 to 16, got " + s.unroll());
        }
        if (s.r0() != 0 || s.x1() != 0 || s.y1() != 0 || s.r1() != 0) {
            throw new InvalidKernelException("cache-level tiles (x1, y1, r1) and r0 are not supported yet; set them to 0");
        }
    }
}
