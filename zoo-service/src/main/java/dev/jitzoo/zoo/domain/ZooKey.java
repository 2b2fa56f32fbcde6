package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;

/**
 * The zoo's key (t, s, rho, id): the op ({@link OpRules#key}: kind, shape and every field that
 * changes the kernel, so two different ops never share an elected kernel), primitive vector and
 * device id, plus the backend, since a Wasm and a WGSL kernel never compete (on Wasm with the
 * threads its kernels run on above one, {@code wasm-t2}: split kernels compete only with kernels
 * split for as many threads, whatever fingerprint the app names its kind by); and the pool whose
 * reports elect it: empty where tenants share their data, the tenant where each keeps its own
 * ({@link TenantData}), so that nothing of one tenant's (elections, similar kinds' timings)
 * reaches another's.
 */
public record ZooKey(String pool, String op, String backend, String primitiveVector, String fingerprint) {

    /** The key in the shared pool. */
    public static ZooKey of(OpSpec op, Backend backend, DeviceProfile device) {
        return of("", op, backend, device);
    }

    public static ZooKey of(String pool, OpSpec op, Backend backend, DeviceProfile device) {
        String problem = OpRules.problem(op, OpRules.MAX_OPERAND_ELEMENTS);
        if (problem != null) {
            throw new InvalidReportException("op: " + problem);
        }
        if (backend == Backend.BACKEND_UNSPECIFIED || backend == Backend.UNRECOGNIZED) {
            throw new InvalidReportException("backend is required");
        }
        if (device.getFingerprint().isBlank()) {
            throw new InvalidReportException("device fingerprint is required");
        }
        String name = backend.name().substring("BACKEND_".length()).toLowerCase();
        int threads = backend == Backend.BACKEND_WASM ? device.getWasm().getThreadsUsed() : 0;
        return new ZooKey(pool, OpRules.key(op), threads > 1 ? name + "-t" + threads : name,
                device.getPrimitiveVector(), device.getFingerprint());
    }

    /** The op part of the key (the op and backend): what every device kind reporting on the op shares. */
    public String opKey() {
        return pooled(String.join("|", op, backend));
    }

    /** One string for caches and indexes. */
    public String asString() {
        return pooled(String.join("|", op, backend, primitiveVector, fingerprint));
    }

    /** The shared pool's keys as they always were; a tenant's own prefixed with it. */
    private String pooled(String key) {
        return pool.isEmpty() ? key : "tenant=" + pool + "|" + key;
    }
}
