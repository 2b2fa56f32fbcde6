package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import java.util.stream.Collectors;

/**
 * The zoo's key (t, s, rho, id): op kind, shape, primitive vector and device id, plus the
 * backend, since a Wasm and a WGSL kernel never compete.
 */
public record ZooKey(String op, String shape, String backend, String primitiveVector, String fingerprint) {

    public static ZooKey of(OpSpec op, Backend backend, DeviceProfile device) {
        if (op.getKind() == OpKind.OP_KIND_UNSPECIFIED || op.getKind() == OpKind.UNRECOGNIZED) {
            throw new InvalidReportException("op kind is required");
        }
        if (op.getShapeCount() == 0 || op.getShapeList().stream().anyMatch(d -> d <= 0)) {
            throw new InvalidReportException("op shape must be non-empty with positive dimensions");
        }
        if (backend == Backend.BACKEND_UNSPECIFIED || backend == Backend.UNRECOGNIZED) {
            throw new InvalidReportException("backend is required");
        }
        if (device.getFingerprint().isBlank()) {
            throw new InvalidReportException("device fingerprint is required");
        }
        return new ZooKey(op.getKind().name().substring("OP_KIND_".length()).toLowerCase(),
                op.getShapeList().stream().map(String::valueOf).collect(Collectors.joining("x")),
                backend.name().substring("BACKEND_".length()).toLowerCase(),
                device.getPrimitiveVector(),
                device.getFingerprint());
    }

    /** The op part of the key (t, s and backend): what every device kind reporting on the op shares. */
    public String opKey() {
        return String.join("|", op, shape, backend);
    }

    /** One string for caches and indexes. */
    public String asString() {
        return String.join("|", op, shape, backend, primitiveVector, fingerprint);
    }
}
