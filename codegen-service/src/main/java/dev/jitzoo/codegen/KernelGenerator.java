package dev.jitzoo.codegen;

import dev.jitzoo.compiler.KernelRequest;
import dev.jitzoo.compiler.kernel.GeneratedKernel;
import dev.jitzoo.compiler.kernel.InvalidKernelException;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
        Optional<KernelArtifact> cached = cache.get(request.getBackend(), kernelRequest.kernelId());
        if (cached.isPresent()) {
            return served(cached.get());
        }
        GenerateResponse compiled = compile(request, kernelRequest);
        cache.put(compiled.getArtifact());
        return compiled;
    }

    /** A batch's generation: the kernels the cache holds looked up at once, before the first is asked for. */
    public Batch batch(List<GenerateRequest> requests) {
        return new Batch(requests);
    }

    /**
     * The kernels of a batch, in any order, each generated when asked for: from one lookup of the
     * whole batch in the cache, or compiled. {@link #keep} puts the compiled ones in the cache in one
     * go; a batch left unfinished (its caller gone) keeps none, and they are compiled again when asked.
     */
    public final class Batch {
        /** A request as the compiler reads it, and its place in the cache. */
        private record Read(KernelRequest kernel, ArtifactCache.Key key) {
        }

        private final List<GenerateRequest> requests;
        /** Each request read; null for one no kernel exists for (refused, with the reason, when it is asked for). */
        private final List<Read> reads = new ArrayList<>();
        private final Map<ArtifactCache.Key, KernelArtifact> cached;
        private final List<KernelArtifact> fresh = new ArrayList<>();

        private Batch(List<GenerateRequest> requests) {
            this.requests = requests;
            for (GenerateRequest request : requests) {
                Read read = null;
                try {
                    KernelRequest kernel = KernelRequest.of(request);
                    read = new Read(kernel, new ArtifactCache.Key(request.getBackend(), kernel.kernelId()));
                } catch (InvalidKernelException e) {
                    // refused when it is asked for
                }
                reads.add(read);
            }
            this.cached = cache.getAll(reads.stream().filter(Objects::nonNull).map(Read::key).distinct().toList());
        }

        /** The kernel of request {@code index}; {@link InvalidKernelException} for one no kernel exists for. */
        public GenerateResponse generate(int index) {
            Read read = reads.get(index);
            if (read == null) {
                return KernelGenerator.this.generate(requests.get(index)); // throws again, with the reason
            }
            KernelArtifact hit = cached.get(read.key());
            if (hit != null) {
                return served(hit);
            }
            GenerateResponse compiled = compile(requests.get(index), read.kernel());
            fresh.add(compiled.getArtifact());
            return compiled;
        }

        /** Puts the kernels this batch compiled in the cache, in one round trip. */
        public void keep() {
            cache.putAll(fresh);
            fresh.clear();
        }
    }

    /** A kernel from the cache: no generation time. */
    private static GenerateResponse served(KernelArtifact artifact) {
        return GenerateResponse.newBuilder().setArtifact(artifact).build();
    }

    private GenerateResponse compile(GenerateRequest request, KernelRequest kernelRequest) {
        GeneratedKernel kernel = kernelRequest.compile();
        compileTimer.record(kernel.generationNanos(), TimeUnit.NANOSECONDS);
        KernelArtifact.Builder artifact = KernelArtifact.newBuilder()
                .setRef(KernelRef.newBuilder()
                        .setKernelId(kernel.kernelId())
                        .setBackend(request.getBackend())
                        .setOp(request.getOp())
                        .setSchedule(request.getSchedule())
                        .setAbiVersion(kernelRequest.abiVersion()))
                .setMetadataJson(kernel.metadataJson());
        if (kernelRequest.backend() == dev.jitzoo.compiler.kernel.Backend.WASM) {
            artifact.setWasm(com.google.protobuf.ByteString.copyFrom(kernel.wasm()));
        } else {
            artifact.setWgsl(kernel.source());
        }
        return GenerateResponse.newBuilder()
                .setArtifact(artifact.build())
                .setGenerationMicros(Math.max(1, TimeUnit.NANOSECONDS.toMicros(kernel.generationNanos())))
                .build();
    }
}
