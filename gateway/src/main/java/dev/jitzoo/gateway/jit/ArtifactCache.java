package dev.jitzoo.gateway.jit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Kernels codegen made, kept in the gateway by what was asked of it (op, schedule, backend, WebGPU
 * limits): a device kind many pages share gets its Welcome's kernel and its offers from memory, one
 * artifact shared by every session, with no call to codegen. Bounded by the artifacts' bytes; an
 * entry lives {@code ttl} after it was made, so kernels of a codegen upgraded meanwhile replace it.
 */
final class ArtifactCache {

    private final Cache<GenerateRequest, KernelArtifact> artifacts;

    ArtifactCache(long maxBytes, Duration ttl, MeterRegistry metrics) {
        this.artifacts = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((GenerateRequest request, KernelArtifact artifact) -> request.getSerializedSize() + artifact.getSerializedSize())
                .expireAfterWrite(ttl)
                .recordStats()
                .build();
        CaffeineCacheMetrics.monitor(metrics, artifacts, "jitzoo_gateway_artifacts");
    }

    Optional<KernelArtifact> get(GenerateRequest request) {
        return Optional.ofNullable(artifacts.getIfPresent(request));
    }

    void put(GenerateRequest request, KernelArtifact artifact) {
        artifacts.put(request, artifact);
    }

    /** Every request's artifact, in order, when all are kept; empty when any one is not. */
    Optional<List<KernelArtifact>> getAll(List<GenerateRequest> requests) {
        List<KernelArtifact> all = new ArrayList<>(requests.size());
        for (GenerateRequest request : requests) {
            KernelArtifact artifact = artifacts.getIfPresent(request);
            if (artifact == null) {
                return Optional.empty();
            }
            all.add(artifact);
        }
        return Optional.of(all);
    }
}
