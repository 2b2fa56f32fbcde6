package dev.jitzoo.codegen.kernel;

import dev.jitzoo.codegen.wasm.KernelTooLargeException;
import dev.jitzoo.codegen.wasm.ModuleEncoder;
import java.nio.charset.StandardCharsets;

/**
 * op + schedule → a Wasm kernel module following ABI v1 (docs/kernel-abi.md), lowered straight to
 * bytecode by our own encoder. Stateless and thread-safe; the bytes are a pure function of the
 * arguments, which is what lets a kernel id stand for them.
 */
public final class WasmCompiler implements KernelCompiler {

    public static final int ABI_VERSION = 1;
    /**
     * Revision of the emitted code. Bump it whenever the bytes for a given kernel id change, so that
     * caches keyed by id and revision never serve a kernel an older compiler made.
     */
    public static final int EMITTER_REVISION = 2;
    public static final String ABI_SECTION = "jitzoo.abi";
    public static final String MEMORY_MODULE = "env";
    public static final String MEMORY_NAME = "memory";
    /** Size budget per kernel: the paper's kernels are 5–30 KB, and browsers' top tiers choke on giant functions. */
    public static final int MAX_KERNEL_BYTES = 32 * 1024;
    /** Accumulators a register tile may hold (v128 when vectorized, f32 otherwise). */
    public static final int MAX_ACCUMULATORS = MatMulPlan.MAX_ACCUMULATORS;

    @Override
    public Backend backend() {
        return Backend.WASM;
    }

    @Override
    public GeneratedKernel compile(Op op, Schedule schedule) {
        long start = System.nanoTime();
        MatMulPlan plan = MatMulPlan.of(op, schedule);
        String metadata = AbiMetadata.json(op, schedule, ABI_VERSION);
        byte[] wasm;
        try {
            wasm = new ModuleEncoder()
                    .importMemory(MEMORY_MODULE, MEMORY_NAME, 1)
                    .function(MatMulEmitter.emit(plan), op.kind().abiName)
                    .customSection(ABI_SECTION, metadata.getBytes(StandardCharsets.UTF_8))
                    .encode(MAX_KERNEL_BYTES);
        } catch (KernelTooLargeException e) {
            throw new InvalidKernelException(e.getMessage() + " for " + op + " " + schedule
                    + "; choose a smaller register tile, r0 or unroll", e);
        }
        String id = KernelIds.of(op, schedule, Backend.WASM, ABI_VERSION);
        return new GeneratedKernel(id, wasm, metadata, System.nanoTime() - start);
    }

    /** Throws {@link InvalidKernelException} with the reason unless {@link #compile} can follow this schedule for any shape. */
    public static void checkSchedule(Schedule schedule) {
        MatMulPlan.check(schedule);
    }
}
