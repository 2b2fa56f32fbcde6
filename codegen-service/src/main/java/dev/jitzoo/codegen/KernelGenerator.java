package dev.jitzoo.codegen;

import dev.jitzoo.compiler.KernelRequest;
import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Turns a request into an artifact: the cached one when this exact kernel was generated before,
 * else a fresh compile, cached for the next client.
 */
@ApplicationScoped
public class KernelGenerator {

    private final ArtifactCache cache;
    private final Timer compileTimer;

    public KernelGenerator(ArtifactCache cache, MeterRegistry metrics) {
        this.cache = cache;
        this.compileTimer = metrics.timer("jitzoo.codegen.compile");
    }

    public GenerateResponse generate(GenerateRequest request) {
        KernelRequest kernelRequest = KernelRequest.of(request);
        boolean wasm = kernelRequest.backend() == dev.jitzoo.compiler.kernel.Backend.WASM;
        int abiVersion = kernelRequest.abiVersion();
        String kernelId = kernelRequest.kernelId();
        Optional<KernelArtifact> cached = cache.get(request.getBackend(), kernelId);
        if (cached.isPresent()) {
            return GenerateResponse.newBuilder().setArtifact(cached.get()).build();
        }
        GeneratedKernel kernel = kernelRequest.compile();
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
}
