package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.device.GpuArchitecture;
import dev.jitzoo.space.device.InvalidDeviceException;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.rules.SplitRules;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.domain.OpShapes;
import dev.jitzoo.space.primitives.PrimitiveTable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

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

    /** The same space with another primitive table (the fleet's, as it grows). */
    public LiteSpace withPrimitives(PrimitiveTable table) {
        return table == primitives ? this : new LiteSpace(rho, maxCandidates, table);
    }

    /** Throws {@link dev.jitzoo.space.domain.InvalidOpException} or {@link InvalidDeviceException} with the reason. */
    public ComposeResponse compose(OpSpec op, DeviceProfile device, Backend backend) {
        if (op.getKind() == OpKind.OP_KIND_CONV) {
            checkRowOp(op);
            DeviceProfiles.check(device);
            List<Candidate> all = switch (backend) {
                case BACKEND_WASM -> {
                    if (!wasmTarget(device).simd()) {
                        throw new InvalidOpException("conv has Wasm kernels with SIMD128 only");
                    }
                    yield split(op, device, backend, ConvSpace.build(op, DeviceProfiles.simdRegisters(device), wasmTarget(device).relaxedSimd()));
                }
                case BACKEND_WGSL -> ConvSpace.buildWgsl(op, DeviceProfiles.limits(device));
                default -> throw noSpace(backend);
            };
            return response(all, all.size());
        }
        if (OpRules.hasCompactWeights(op.getKind()) && !(backend == Backend.BACKEND_WGSL && OpRules.hasWgslKernels(op.getKind()))) {
            OpShapes shapes = OpShapes.of(op);
            DeviceProfiles.check(device);
            if (backend != Backend.BACKEND_WASM || !wasmTarget(device).simd()) {
                throw new InvalidOpException(OpRules.name(op.getKind()) + " has kernels on Wasm with SIMD128 only");
            }
            int registers = DeviceProfiles.simdRegisters(device);
            boolean relaxed = wasmTarget(device).relaxedSimd();
            List<Candidate> all = split(op, device, backend, switch (op.getKind()) {
                case OP_KIND_MATMUL_INT8 -> Int8Space.build(shapes, registers);
                case OP_KIND_MATMUL_Q4 -> Q4Space.build(shapes, registers, relaxed);
                default -> F16Space.build(shapes, registers, relaxed);
            });
            return response(all, all.size());
        }
        if (rowOp(op)) {
            checkRowOp(op);
            DeviceProfiles.check(device);
            List<Candidate> all = split(op, device, backend, RowOpSpace.build(simd(device, backend)));
            return response(all, all.size());
        }
        OpShapes shapes = OpShapes.of(op);
        DeviceProfiles.check(device);
        List<Candidate> all = new ArrayList<>(switch (backend) {
            case BACKEND_WASM -> WasmSpace.build(shapes, constantB(op), op.getTransposeB(), wasmTarget(device), primitives, rho);
            case BACKEND_WGSL -> WebGpuSpace.build(shapes, gpu(device), DeviceProfiles.limits(device), rho);
            default -> throw noSpace(backend);
        });
        all.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        all = split(op, device, backend, all);
        return response(all, NaiveSpace.size(shapes, backend));
    }

    /** The space's first {@code maxCandidates} candidates, its size, and the naive space's. */
    private ComposeResponse response(List<Candidate> all, long naiveSize) {
        return ComposeResponse.newBuilder().addAllCandidates(all.subList(0, Math.min(maxCandidates, all.size())))
                .setLiteSpaceSize(all.size()).setNaiveSpaceSize(naiveSize).build();
    }

    /**
     * A schedule made elsewhere (a similar device's best, from the zoo) as a candidate on this device,
     * with its Table 1 figures here; empty when it cannot run here. The op and device are taken as
     * valid ({@link #compose} checked them).
     */
    public static Optional<Candidate> fit(OpSpec op, DeviceProfile device, Backend backend, Schedule made) {
        Schedule schedule = backend == Backend.BACKEND_WASM ? SplitRules.forThreads(op, made, DeviceProfiles.wasmThreads(device)) : made;
        if (op.getKind() == OpKind.OP_KIND_CONV) {
            boolean runs = backend == Backend.BACKEND_WGSL ? ScheduleRules.wgslConvProblem(schedule) == null
                    : ConvSpace.runs(SplitRules.forThreads(op, schedule, 1), wasmTarget(device).simd())
                    && (!schedule.getRelaxedSimd() || wasmTarget(device).relaxedSimd());
            return runs ? Optional.of(Candidate.newBuilder().setSchedule(schedule).build()) : Optional.empty();
        }
        if (OpRules.hasCompactWeights(op.getKind()) && backend == Backend.BACKEND_WASM) {
            Schedule fields = SplitRules.forThreads(op, schedule, 1);
            boolean simd = wasmTarget(device).simd();
            boolean relaxed = !fields.getRelaxedSimd() || wasmTarget(device).relaxedSimd();
            boolean runs = relaxed && switch (op.getKind()) {
                case OP_KIND_MATMUL_INT8 -> Int8Space.runs(fields, simd);
                case OP_KIND_MATMUL_Q4 -> Q4Space.runs(fields, simd);
                default -> F16Space.runs(fields, simd);
            };
            return runs ? Optional.of(Candidate.newBuilder().setSchedule(schedule).build()) : Optional.empty();
        }
        if (!OpRules.hasWgslKernels(op.getKind())) {
            return Optional.empty(); // a quantized product on WGSL
        }
        if (rowOp(op)) {
            Schedule fields = backend == Backend.BACKEND_WASM ? SplitRules.forThreads(op, schedule, 1) : schedule;
            return RowOpSpace.runs(fields, simd(device, backend))
                    ? Optional.of(Candidate.newBuilder().setSchedule(schedule).build()) : Optional.empty();
        }
        OpShapes shapes = OpShapes.of(op);
        return Optional.ofNullable(switch (backend) {
            case BACKEND_WASM -> {
                WasmSpace.Target target = wasmTarget(device);
                yield WasmSpace.runs(schedule, constantB(op), op.getTransposeB(), target) ? WasmSpace.utilization(shapes, schedule, target) : null;
            }
            case BACKEND_WGSL -> WebGpuSpace.runs(schedule, DeviceProfiles.limits(device))
                    ? WebGpuSpace.utilization(schedule, gpu(device)) : null;
            default -> throw noSpace(backend);
        }).map(use -> Candidate.newBuilder().setSchedule(schedule).setUtilization(use).build());
    }

    /** On Wasm, every candidate split for the device's threads (none on one thread). */
    private static List<Candidate> split(OpSpec op, DeviceProfile device, Backend backend, List<Candidate> candidates) {
        if (backend != Backend.BACKEND_WASM || DeviceProfiles.wasmThreads(device) <= 1) {
            return candidates;
        }
        int threads = DeviceProfiles.wasmThreads(device);
        return candidates.stream().map(c -> c.toBuilder().setSchedule(SplitRules.forThreads(op, c.getSchedule(), threads)).build())
                .toList();
    }

    /** An op that is not a product (softmax, layer norm, add, mul); a float16-weight matmul on WGSL is a matmul there. */
    private static boolean rowOp(OpSpec op) {
        return !OpRules.isMatmul(op.getKind()) && !OpRules.hasCompactWeights(op.getKind());
    }

    private static void checkRowOp(OpSpec op) {
        String problem = OpRules.problem(op, OpRules.MAX_OPERAND_ELEMENTS);
        if (problem != null) {
            throw new InvalidOpException(problem);
        }
    }

    /** Vectors on WebGPU always (vec4); on Wasm where the device has SIMD128. */
    private static boolean simd(DeviceProfile device, Backend backend) {
        return switch (backend) {
            case BACKEND_WASM -> wasmTarget(device).simd();
            case BACKEND_WGSL -> true;
            default -> throw noSpace(backend);
        };
    }

    /** B is constant (weights) in a MatMul and when one B serves every batch; packing it once then pays. */
    private static boolean constantB(OpSpec op) {
        return op.getKind() == OpKind.OP_KIND_MATMUL || op.getBroadcastB();
    }

    private static WasmSpace.Target wasmTarget(DeviceProfile device) {
        if (!device.hasWasm()) {
            throw new InvalidDeviceException("a Wasm space needs the device's wasm features");
        }
        return new WasmSpace.Target(device.getWasm().getSimd(), device.getWasm().getRelaxedSimd(),
                DeviceProfiles.simdRegisters(device), DeviceProfiles.l1Bytes(device));
    }

    private static GpuArchitecture gpu(DeviceProfile device) {
        if (!device.hasWebgpu()) {
            throw new InvalidDeviceException("a WebGPU space needs the device's webgpu adapter");
        }
        return GpuArchitecture.lookup(device.getWebgpu().getVendor(), device.getWebgpu().getArchitecture());
    }

    private static InvalidDeviceException noSpace(Backend backend) {
        return new InvalidDeviceException("backend " + backend + " has no space; use BACKEND_WASM or BACKEND_WGSL");
    }
}
