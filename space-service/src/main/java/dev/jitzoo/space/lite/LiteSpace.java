package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.device.GpuArchitecture;
import dev.jitzoo.space.device.InvalidDeviceException;
import dev.jitzoo.space.domain.OpShapes;
import dev.jitzoo.space.primitives.PrimitiveTable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The web-specific lite space of one op on one device (paper section 5.2): the candidates Table 1's
 * heuristics keep, most promising first, cut to {@code maxCandidates}, with the naive space's size.
 * Stateless; {@code rho} is the relaxation ratio of the resource heuristics (1 = exact).
 */
public final class LiteSpace {

    public static final double DEFAULT_RELAXATION = 0.85;

    private final double rho;
    private final int maxCandidates;
    private final PrimitiveTable primitives;

    /** With the shipped primitive table. */
    public LiteSpace(double rho, int maxCandidates) {
        this(rho, maxCandidates, PrimitiveTable.DEFAULT);
    }

    /** {@code primitives} says which primitives are fixed and which the space tries both ways. */
    public LiteSpace(double rho, int maxCandidates, PrimitiveTable primitives) {
        if (!(rho > 0 && rho <= 1)) {
            throw new IllegalArgumentException("the relaxation ratio must be in (0, 1], got " + rho);
        }
        if (maxCandidates < 1) {
            throw new IllegalArgumentException("maxCandidates must be at least 1, got " + maxCandidates);
        }
        this.rho = rho;
        this.maxCandidates = maxCandidates;
        this.primitives = primitives;
    }

    /** Throws {@link dev.jitzoo.space.domain.InvalidOpException} or {@link InvalidDeviceException} with the reason. */
    public ComposeResponse compose(OpSpec op, DeviceProfile device, Backend backend) {
        OpShapes shapes = OpShapes.of(op);
        DeviceProfiles.check(device);
        List<Candidate> all = new ArrayList<>(switch (backend) {
            case BACKEND_WASM -> {
                if (!device.hasWasm()) {
                    throw new InvalidDeviceException("a Wasm space needs the device's wasm features");
                }
                // B is constant (weights) in a MatMul and when one B serves every batch; packing it once then pays
                boolean constantB = op.getKind() == OpKind.OP_KIND_MATMUL || op.getBroadcastB();
                yield WasmSpace.build(shapes, constantB, new WasmSpace.Target(device.getWasm().getSimd(),
                        device.getWasm().getRelaxedSimd(), DeviceProfiles.simdRegisters(device),
                        DeviceProfiles.l1Bytes(device)), primitives, rho);
            }
            case BACKEND_WGSL -> {
                if (!device.hasWebgpu()) {
                    throw new InvalidDeviceException("a WebGPU space needs the device's webgpu adapter");
                }
                yield WebGpuSpace.build(shapes, GpuArchitecture.lookup(device.getWebgpu().getVendor(),
                        device.getWebgpu().getArchitecture()), DeviceProfiles.limits(device), rho);
            }
            default -> throw new InvalidDeviceException("backend " + backend + " has no space; use BACKEND_WASM or BACKEND_WGSL");
        });
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return ComposeResponse.newBuilder()
                .addAllCandidates(all.subList(0, Math.min(maxCandidates, all.size())))
                .setLiteSpaceSize(all.size())
                .setNaiveSpaceSize(NaiveSpace.size(shapes, backend))
                .build();
    }
}
