package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.Function;
import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.KernelTooLargeException;
import dev.jitzoo.compiler.wasm.ModuleEncoder;
import dev.jitzoo.compiler.wasm.passes.Pass;
import dev.jitzoo.compiler.wasm.passes.Passes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * op + schedule → a Wasm kernel module following ABI v1, or v2 when the schedule splits the op
 * (docs/kernel-abi.md), lowered straight to
 * bytecode: the plan decides the loop nest, the emitter writes it as Wasm expression IR in the
 * plainest form, the paper's three passes rewrite that IR, and our encoder writes the bytes.
 * Stateless and thread-safe; the bytes are a pure function of the arguments, which is what lets a
 * kernel id stand for them.
 */
public final class WasmCompiler implements KernelCompiler {

    public static final int ABI_VERSION = 1;
    /** Split kernels: a range of units per call, on a shared memory. */
    public static final int ABI_VERSION_SPLIT = 2;
    /**
     * Revision of the emitted code. Bump it whenever the bytes for a given kernel id change, so that
     * caches keyed by id and revision never serve a kernel an older compiler made.
     */
    public static final int EMITTER_REVISION = 5;
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

    /** The kernel with every pass on, as the service ships it. */
    @Override
    public GeneratedKernel compile(Op op, Schedule schedule) {
        return compile(op, schedule, Pass.ALL);
    }

    /** A function of a kernel module and the name it is exported under. */
    public record Exported(String name, Function function) {
    }

    /** The kernel with only {@code passes} run (the pass benchmark turns them off one by one). */
    public GeneratedKernel compile(Op op, Schedule schedule, Set<Pass> passes) {
        long start = System.nanoTime();
        int abi = abiVersion(schedule);
        String metadata = AbiMetadata.wasm(op, schedule, abi, passes);
        boolean tee = passes.contains(Pass.TEE);
        ModuleEncoder module = new ModuleEncoder().importMemory(MEMORY_MODULE, MEMORY_NAME, 1, schedule.split().isSplit());
        for (Exported exported : lower(op, schedule, passes)) {
            module.function(exported.function(), exported.name(), tee);
        }
        byte[] wasm;
        try {
            wasm = module.customSection(ABI_SECTION, metadata.getBytes(StandardCharsets.UTF_8)).encode(MAX_KERNEL_BYTES);
        } catch (KernelTooLargeException e) {
            throw new InvalidKernelException(e.getMessage() + " for " + op + " " + schedule
                    + "; choose a smaller register tile, r0 or unroll", e);
        }
        String id = KernelIds.of(op, schedule, Backend.WASM, abi, passes);
        return new GeneratedKernel(id, wasm, metadata, System.nanoTime() - start);
    }

    /** The ABI a kernel of this schedule follows: 2 when it splits, else 1. */
    public static int abiVersion(Schedule schedule) {
        return schedule.split().isSplit() ? ABI_VERSION_SPLIT : ABI_VERSION;
    }

    /** Throws {@link InvalidKernelException} with the reason unless {@link #compile} can follow this matmul schedule for any shape. */
    public static void checkSchedule(Schedule schedule) {
        MatMulPlan.check(schedule);
    }

    /**
     * The module's functions in the expression IR after the passes: the entry (over a range of units
     * when split), then pack_b when B is packed.
     */
    public static List<Exported> lower(Op op, Schedule schedule, Set<Pass> passes) {
        boolean split = schedule.split().isSplit();
        if (op.kind() == OpKind.CONV) {
            return List.of(new Exported(op.kind().abiName, optimized(ConvEmitter.emit(op, schedule), passes)));
        }
        if (op.kind() == OpKind.MATMUL_F16) {
            FunctionBuilder entry = split ? RangeEmitter.emit(op, schedule) : F16MatMulEmitter.emit(op, schedule);
            return List.of(new Exported(op.kind().abiName, optimized(entry, passes)));
        }
        if (op.kind().quantized) {
            boolean int8 = op.kind() == OpKind.MATMUL_INT8;
            FunctionBuilder entry = split ? RangeEmitter.emit(op, schedule)
                    : int8 ? Int8MatMulEmitter.emit(op, schedule) : Q4MatMulEmitter.emit(op, schedule);
            FunctionBuilder pack = int8 ? Int8MatMulEmitter.emitPack(op, schedule) : Q4MatMulEmitter.emitPack(op);
            return List.of(new Exported(op.kind().abiName, optimized(entry, passes)),
                    new Exported(PackEmitter.ENTRY, optimized(pack, passes)));
        }
        if (!op.kind().matmul) {
            FunctionBuilder entry = split ? RangeEmitter.emit(op, schedule) : RowOpEmitter.emit(op, schedule);
            return List.of(new Exported(op.kind().abiName, optimized(entry, passes)));
        }
        MatMulPlan plan = MatMulPlan.of(op, schedule.withSplit(Split.NONE));
        List<Exported> functions = new ArrayList<>();
        FunctionBuilder entry = split ? RangeEmitter.emit(op, schedule) : MatMulEmitter.emit(plan);
        functions.add(new Exported(op.kind().abiName, optimized(entry, passes)));
        if (schedule.packB()) {
            functions.add(new Exported(PackEmitter.ENTRY, optimized(PackEmitter.emit(plan), passes)));
        }
        return functions;
    }

    private static Function optimized(FunctionBuilder builder, Set<Pass> passes) {
        return Passes.run(builder.build(), passes);
    }
}
