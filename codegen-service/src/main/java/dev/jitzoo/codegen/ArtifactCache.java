package dev.jitzoo.codegen;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.KernelArtifact;
import java.util.Optional;

/**
 * Where generated kernels are kept by id, so identical requests compile once (the port
 * {@link KernelGenerator} needs; Redis in {@code infra/}). A cache may lose anything: a kernel can
 * always be generated again.
 */
public interface ArtifactCache {

    Optional<KernelArtifact> get(Backend backend, String kernelId);

    void put(KernelArtifact artifact);
}
