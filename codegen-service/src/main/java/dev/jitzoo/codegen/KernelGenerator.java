package dev.jitzoo.codegen;

import dev.jitzoo.codegen.infra.RedisArtifactCache;
import dev.jitzoo.codegen.kernel.Epilogue;
import dev.jitzoo.codegen.kernel.GeneratedKernel;
import dev.jitzoo.codegen.kernel.InvalidKernelException;
import dev.jitzoo.codegen.kernel.KernelIds;
import dev.jitzoo.codegen.kernel.Op;
import dev.jitzoo.codegen.kernel.OpKind;
import dev.jitzoo.codegen.kernel.Schedule;
import dev.jitzoo.codegen.kernel.WasmCompiler;
import dev.jitzoo.codegen.wgsl.WgslCompiler;
import dev.jitzoo.codegen.wgsl.WgslLimits;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.WebGpuLimits;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Turns a request into an artifact: the cached one when this exact kernel was generated before,
 * else a fresh compile, cached for the next client.
 */
@ApplicationScoped
public class KernelGenerator {

    private final WasmCompiler wasmCompiler = new WasmCompiler();
    private final WgslCompiler wgslCompiler = new WgslCompiler();
    private final RedisArtifactCache cache;
    private final Timer compileTimer;

    public KernelGenerator(RedisArtifactCache cache, MeterRegistry metrics) {
        this.cache = cache;
        this.compileTimer = metrics.timer("jitzoo.codegen.compile");
    }

    public GenerateResponse generate(GenerateRequest request) {
        dev.jitzoo.codegen.kernel.Backend backend = switch (request.getBackend()) {
            case BACKEND_WASM -> dev.jitzoo.codegen.kernel.Backend.WASM;
            case BACKEND_WGSL -> dev.jitzoo.codegen.kernel.Backend.WGSL;
            default -> throw new InvalidKernelException("backend " + request.getBackend()
                    + " is not supported; use BACKEND_WASM or BACKEND_WGSL");
        };
        boolean wasm = backend == dev.jitzoo.codegen.kernel.Backend.WASM;
        int abiVersion = wasm ? WasmCompiler.ABI_VERSION : WgslCompiler.ABI_VERSION;
        Op op = toOp(request.getOp());
        Schedule schedule = toSchedule(request.getSchedule());
        if (wasm && request.hasWebgpuLimits()) {
            throw new InvalidKernelException("webgpu_limits apply to WGSL kernels; a Wasm request takes none");
        }
        WgslLimits limits = wasm ? WgslLimits.WEBGPU_DEFAULTS : toLimits(request.getWebgpuLimits());
        String kernelId = wasm ? KernelIds.of(op, schedule, backend, abiVersion) : WgslCompiler.kernelId(op, schedule, limits);
        Optional<KernelArtifact> cached = cache.get(request.getBackend(), kernelId);
        if (cached.isPresent()) {
            return GenerateResponse.newBuilder().setArtifact(cached.get()).build();
        }
        GeneratedKernel kernel = wasm ? wasmCompiler.compile(op, schedule) : wgslCompiler.compile(op, schedule, limits);
        compileTimer.record(kernel.generationNanos(), TimeUnit.NANOSECONDS);
        KernelArtifact.Builder artifact = KernelArtifact.newBuilder()
                .setRef(KernelRef.newBuilder()
                        .setKernelId(kernel.kernelId())
                        .setBackend(request.getBackend())
                        .setOp(request.getOp())
                        .setSchedule(request.getSchedule())
                        .setAbiVersion(abiVersion))
                .setMetadataJson(kernel.metadataJson());
        if (wasm) {
            artifact.setWasm(com.google.protobuf.ByteString.copyFrom(kernel.wasm()));
        } else {
            artifact.setWgsl(kernel.source());
        }
        KernelArtifact built = artifact.build();
        cache.put(built);
        return GenerateResponse.newBuilder()
                .setArtifact(built)
                .setGenerationMicros(Math.max(1, TimeUnit.NANOSECONDS.toMicros(kernel.generationNanos())))
                .build();
    }

    private static Op toOp(dev.jitzoo.proto.kernel.v1.OpSpec spec) {
        OpKind kind = switch (spec.getKind()) {
            case OP_KIND_MATMUL -> OpKind.MATMUL;
            case OP_KIND_BATCH_MATMUL -> OpKind.BATCH_MATMUL;
            case OP_KIND_ADD -> OpKind.ADD;
            case OP_KIND_MUL -> OpKind.MUL;
            case OP_KIND_SOFTMAX -> OpKind.SOFTMAX;
            case OP_KIND_LAYER_NORM -> OpKind.LAYER_NORM;
            default -> throw new InvalidKernelException("unknown op kind " + spec.getKindValue());
        };
        List<Epilogue> epilogue = spec.getEpilogueList().stream().map(e -> switch (e.getKind()) {
            case EPILOGUE_KIND_SCALE -> Epilogue.scale(e.getValue());
            case EPILOGUE_KIND_BIAS -> Epilogue.of(Epilogue.Kind.BIAS);
            case EPILOGUE_KIND_RELU -> Epilogue.of(Epilogue.Kind.RELU);
            case EPILOGUE_KIND_GELU_TANH -> Epilogue.of(Epilogue.Kind.GELU_TANH);
            case EPILOGUE_KIND_GELU_ERF -> Epilogue.of(Epilogue.Kind.GELU_ERF);
            case EPILOGUE_KIND_RESIDUAL -> Epilogue.of(Epilogue.Kind.RESIDUAL);
            default -> throw new InvalidKernelException("unknown epilogue kind " + e.getKindValue());
        }).toList();
        return new Op(kind, spec.getShapeList(), spec.getTransposeB(), spec.getBroadcastB(), epilogue);
    }

    private static Schedule toSchedule(dev.jitzoo.proto.kernel.v1.Schedule s) {
        return new Schedule(s.getX0(), s.getY0(), s.getR0(), s.getX1(), s.getY1(), s.getR1(),
                s.getVectorize(), s.getUnroll(), s.getRelaxedSimd(), s.getPackB(), s.getColumnsOuter());
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
