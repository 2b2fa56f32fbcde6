package dev.jitzoo.compiler;

import dev.jitzoo.compiler.kernel.Backend;
import dev.jitzoo.compiler.kernel.Epilogue;
import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.compiler.kernel.KernelIds;
import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.OpKind;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.Split;
import dev.jitzoo.compiler.kernel.WasmCompiler;
import dev.jitzoo.compiler.wgsl.WgslCompiler;
import dev.jitzoo.compiler.wgsl.WgslLimits;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.kernel.v1.WebGpuLimits;
import java.util.List;

/**
 * A {@code GenerateRequest} read into the compiler's terms and checked: which backend, which op,
 * which schedule, and for WGSL the device's limits. Throws {@link InvalidKernelException} with the
 * reason for anything no kernel can be made of.
 */
public record KernelRequest(Backend backend, Op op, Schedule schedule, WgslLimits limits) {

    private static final WasmCompiler WASM = new WasmCompiler();
    private static final WgslCompiler WGSL = new WgslCompiler();

    public static KernelRequest of(GenerateRequest request) {
        Backend backend = switch (request.getBackend()) {
            case BACKEND_WASM -> Backend.WASM;
            case BACKEND_WGSL -> Backend.WGSL;
            default -> throw new InvalidKernelException("backend " + request.getBackend()
                    + " is not supported; use BACKEND_WASM or BACKEND_WGSL");
        };
        if (backend == Backend.WASM && request.hasWebgpuLimits()) {
            throw new InvalidKernelException("webgpu_limits apply to WGSL kernels; a Wasm request takes none");
        }
        WgslLimits limits = backend == Backend.WASM ? WgslLimits.WEBGPU_DEFAULTS : toLimits(request.getWebgpuLimits());
        return new KernelRequest(backend, toOp(request.getOp()), toSchedule(request.getSchedule()), limits);
    }

    public int abiVersion() {
        return backend == Backend.WASM ? WasmCompiler.abiVersion(schedule) : WgslCompiler.ABI_VERSION;
    }

    /** The id of the kernel {@link #compile()} makes, known before compiling (for caches). */
    public String kernelId() {
        return backend == Backend.WASM ? KernelIds.of(op, schedule, backend, abiVersion())
                : WgslCompiler.kernelId(op, schedule, limits);
    }

    public GeneratedKernel compile() {
        return backend == Backend.WASM ? WASM.compile(op, schedule) : WGSL.compile(op, schedule, limits);
    }

    /** The compiler's op of a wire op; {@link InvalidKernelException} for one it cannot read. */
    public static Op toOp(dev.jitzoo.proto.kernel.v1.OpSpec spec) {
        OpKind kind = OpKind.of(spec.getKind())
                .orElseThrow(() -> new InvalidKernelException("unknown op kind " + spec.getKindValue()));
        List<Epilogue> epilogue = spec.getEpilogueList().stream().map(e -> {
            Epilogue.Kind step = Epilogue.Kind.of(e.getKind());
            return step == Epilogue.Kind.SCALE ? Epilogue.scale(e.getValue()) : Epilogue.of(step);
        }).toList();
        return new Op(kind, spec.getShapeList(), spec.getTransposeB(), spec.getBroadcastB(), epilogue, spec.getEpsilon(),
                spec.hasConv() || kind == OpKind.CONV ? dev.jitzoo.compiler.kernel.ConvWindow.of(spec.getConv()) : null);
    }

    static Schedule toSchedule(dev.jitzoo.proto.kernel.v1.Schedule s) {
        return new Schedule(s.getX0(), s.getY0(), s.getR0(), s.getX1(), s.getY1(), s.getR1(),
                s.getVectorize(), s.getUnroll(), s.getRelaxedSimd(), s.getPackB(), s.getColumnsOuter(), toSplit(s));
    }

    static Split toSplit(dev.jitzoo.proto.kernel.v1.Schedule s) {
        return switch (s.getSplitAxis()) {
            case SPLIT_AXIS_UNSPECIFIED -> new Split(Split.Axis.NONE, s.getSplitGrain());
            case SPLIT_AXIS_ROWS -> Split.rows(s.getSplitGrain());
            case SPLIT_AXIS_COLUMNS -> Split.columns(s.getSplitGrain());
            default -> throw new InvalidKernelException("unknown split axis " + s.getSplitAxisValue());
        };
    }

    /** The device's WebGPU limits; a field left 0 takes the WebGPU default. */
    static WgslLimits toLimits(WebGpuLimits l) {
        WgslLimits d = WgslLimits.WEBGPU_DEFAULTS;
        long binding = l.getMaxStorageBufferBindingSize();
        int[] ints = {l.getMaxComputeInvocationsPerWorkgroup(), l.getMaxComputeWorkgroupStorageSize(),
                l.getMaxComputeWorkgroupSizeX(), l.getMaxComputeWorkgroupSizeY(), l.getMaxComputeWorkgroupsPerDimension()};
        for (int value : ints) {
            if (value < 0) {
                throw new InvalidKernelException("WebGPU limits must be below 2^31, got " + Integer.toUnsignedString(value));
            }
        }
        if (binding < 0) {
            throw new InvalidKernelException("maxStorageBufferBindingSize must be below 2^63, got " + Long.toUnsignedString(binding));
        }
        return new WgslLimits(
                ints[0] == 0 ? d.maxComputeInvocationsPerWorkgroup() : ints[0],
                ints[1] == 0 ? d.maxComputeWorkgroupStorageSize() : ints[1],
                ints[2] == 0 ? d.maxComputeWorkgroupSizeX() : ints[2],
                ints[3] == 0 ? d.maxComputeWorkgroupSizeY() : ints[3],
                ints[4] == 0 ? d.maxComputeWorkgroupsPerDimension() : ints[4],
                binding == 0 ? d.maxStorageBufferBindingSize() : binding);
    }
}
