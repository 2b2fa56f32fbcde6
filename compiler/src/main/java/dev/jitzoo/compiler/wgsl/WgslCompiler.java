package dev.jitzoo.compiler.wgsl;

import dev.jitzoo.compiler.kernel.AbiMetadata;
import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.Backend;
import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.compiler.kernel.KernelCompiler;
import dev.jitzoo.compiler.kernel.KernelIds;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.OpKind;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.wasm.passes.Pass;
import dev.jitzoo.proto.rules.OpRules;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * op + schedule → a WGSL compute shader following ABI v1 (docs/kernel-abi.md, "WGSL kernels"):
 * entry point {@code main}, one storage buffer per operand in metadata order, shapes baked in as
 * constants, and the workgroup size and dispatch grid in the metadata. The source is written
 * straight into a StringBuilder by one writer per op family ({@link MatMulShader},
 * {@link RowOpShader}, {@link ConvShader}); the browser's WGSL compiler (Tint, Naga) and the GPU driver do the rest.
 * Stateless and thread-safe; the text is a pure function of the arguments.
 *
 * <p>Schedules on WGSL: {@code y0 x x0} is one invocation's register tile of C; {@code x1, y1}
 * the block of C one workgroup covers, so the workgroup is {@code (x1/x0, y1/y0, 1)} (0 = 16
 * invocations along that axis, fewer when the shape needs fewer, halved until the workgroup fits
 * the limits); {@code r1 > 0} stages A and B tiles r1 deep in workgroup memory (cache_read);
 * {@code r0} k steps are loaded together; {@code unroll} copies of them per trip of the k loop;
 * {@code vectorize} makes x0 columns vec4s. {@code relaxedSimd}, {@code packB} and
 * {@code columnsOuter} are Wasm primitives and are refused.
 */
public final class WgslCompiler implements KernelCompiler {

    public static final int ABI_VERSION = 1;
    /** Revision of the emitted text: bump it whenever the source for a given kernel id changes. */
    public static final int EMITTER_REVISION = 1;
    public static final String ENTRY = "main";

    @Override
    public Backend backend() {
        return Backend.WGSL;
    }

    /** The kernel for the WebGPU default limits, which every adapter offers. */
    @Override
    public GeneratedKernel compile(Op op, Schedule schedule) {
        return compile(op, schedule, WgslLimits.WEBGPU_DEFAULTS);
    }

    /** The kernel for a device with these limits; throws {@link InvalidKernelException} with the reason when it cannot fit. */
    public GeneratedKernel compile(Op op, Schedule schedule, WgslLimits limits) {
        long start = System.nanoTime();
        Shader shader = shader(op, schedule, limits);
        String metadata = AbiMetadata.commonWgsl(op, schedule, ABI_VERSION, ENTRY)
                .putInts("workgroupSize", ints(shader.workgroupSize()))
                .putInts("dispatch", ints(shader.dispatch()))
                .put("workgroupStorageBytes", shader.storageBytes())
                .toString();
        String id = kernelId(op, schedule, limits);
        byte[] source = shader.source().getBytes(StandardCharsets.UTF_8);
        return new GeneratedKernel(id, source, metadata, System.nanoTime() - start);
    }

    /** The id of the kernel {@link #compile(Op, Schedule, WgslLimits)} makes: limits other than the defaults are part of it. */
    public static String kernelId(Op op, Schedule schedule, WgslLimits limits) {
        return KernelIds.hash(KernelIds.canonical(op, schedule, Backend.WGSL, ABI_VERSION, Pass.ALL)
                + (limits.equals(WgslLimits.WEBGPU_DEFAULTS) ? "" : ";limits=" + limits.idText()));
    }

    /** Throws {@link InvalidKernelException} with the reason unless this schedule makes a WGSL kernel for the op. */
    static Shader shader(Op op, Schedule schedule, WgslLimits limits) {
        if (op == null || schedule == null || limits == null) {
            throw new InvalidKernelException("an op, a schedule and the device limits are required");
        }
        if (!OpRules.hasWgslKernels(op.kind().wire)) {
            throw new InvalidKernelException(op.kind().abiName + " has no WGSL kernel: on WebGPU its products run in float32 "
                    + "over weights dequantized at load (docs/kernel-abi.md)");
        }
        if (op.fuses(Epilogue.Kind.ROUND_HALF)) {
            throw new InvalidKernelException("round_half has no WGSL form: a float16 file's rounding runs in Wasm kernels");
        }
        if (schedule.relaxedSimd()) {
            throw new InvalidKernelException("relaxed SIMD is a Wasm schedule primitive; WGSL kernels take no relaxedSimd");
        }
        if (schedule.packB()) {
            throw new InvalidKernelException("packB is a Wasm schedule primitive (B packed by an exported pack_b); "
                    + "WGSL kernels read B in place");
        }
        if (schedule.columnsOuter()) {
            throw new InvalidKernelException("columnsOuter orders the loops of a Wasm kernel; on WGSL each invocation "
                    + "computes one register tile and the dispatch orders the tiles");
        }
        if (schedule.split().isSplit()) {
            throw new InvalidKernelException("split is a Wasm schedule primitive (workers over one shared memory); "
                    + "a WGSL dispatch already spreads its workgroups over the GPU");
        }
        if (op.kind() == OpKind.CONV) {
            return ConvShader.write(op, schedule, limits);
        }
        if (!op.kind().matmul && !op.kind().compactWeights) {
            return RowOpShader.write(op, schedule, limits);
        }
        MatMulLayout layout = MatMulLayout.of(op, schedule, limits);
        return new Shader(MatMulShader.write(layout), new int[] {layout.threadsX(), layout.threadsY(), 1},
                layout.dispatch(), layout.storageBytes());
    }

    private static List<Integer> ints(int[] values) {
        return List.of(values[0], values[1], values[2]);
    }
}
