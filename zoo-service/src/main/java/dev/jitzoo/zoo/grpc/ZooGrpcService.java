package dev.jitzoo.zoo.grpc;

import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import dev.jitzoo.proto.zoo.v1.DevicePrimitives;
import dev.jitzoo.proto.zoo.v1.PrimitivesRequest;
import dev.jitzoo.proto.zoo.v1.PrimitivesResponse;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolveResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.SimilarKernel;
import dev.jitzoo.proto.zoo.v1.SimilarRequest;
import dev.jitzoo.proto.zoo.v1.SimilarResponse;
import dev.jitzoo.proto.zoo.v1.ZooService;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.InvalidReportException;
import dev.jitzoo.zoo.domain.ReportStore;
import dev.jitzoo.zoo.domain.SimilarKernels;
import dev.jitzoo.zoo.domain.Zoo;
import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/** gRPC edge of the zoo: converts requests and errors, nothing more. */
@GrpcService
public class ZooGrpcService implements ZooService {

    private final Zoo zoo;

    public ZooGrpcService(Zoo zoo) {
        this.zoo = zoo;
    }

    /**
     * Answered on the event loop when this replica holds every op's election in memory (the
     * usual case, no thread hop); otherwise on a worker, which may read Redis or MongoDB.
     */
    @Override
    public Uni<ResolveResponse> resolve(ResolveRequest request) {
        return call(() -> answer(request, true)).onItem().ifNull()
                .switchTo(() -> call(() -> answer(request, false)).runSubscriptionOn(Infrastructure.getDefaultWorkerPool()));
    }

    /** Every op's election; with {@code heldOnly}, from memory only, or null when one op is not held. */
    private ResolveResponse answer(ResolveRequest request, boolean heldOnly) {
        String fingerprint = request.getDevice().getFingerprint();
        Optional<Double> peak = heldOnly ? zoo.heldPeakGflops(fingerprint) : Optional.of(zoo.peakGflops(fingerprint));
        if (peak.isEmpty()) {
            return null;
        }
        ResolveResponse.Builder response = ResolveResponse.newBuilder();
        for (OpSpec op : request.getOpsList()) {
            Optional<BestKernel> best = heldOnly ? zoo.held(request.getTenant(), op, request.getBackend(), request.getDevice())
                    : zoo.resolve(request.getTenant(), op, request.getBackend(), request.getDevice());
            if (heldOnly && best.isEmpty()) {
                return null;
            }
            response.addKernels(resolved(op, best, peak.get()));
        }
        return response.build();
    }

    @Override
    @Blocking
    public Uni<SimilarResponse> similar(SimilarRequest request) {
        return call(() -> {
            Zoo.Similar similar = zoo.similar(request.getTenant(), request.getOp(), request.getBackend(), request.getDevice(),
                    request.getLimit());
            SimilarResponse.Builder response = SimilarResponse.newBuilder().setSimilarDevices(similar.similarKinds());
            for (SimilarKernels.Scored k : similar.kernels()) {
                response.addKernels(SimilarKernel.newBuilder()
                        .setKernel(k.kernel()).setScore(k.score()).setDevices(k.devices()));
            }
            return response.setOwn(resolved(request.getOp(), similar.own(), zoo.peakGflops(request.getDevice().getFingerprint()))).build();
        });
    }

    @Override
    @Blocking
    public Uni<PrimitivesResponse> primitives(PrimitivesRequest request) {
        return call(() -> {
            Map<String, DevicePrimitives.Builder> devices = new LinkedHashMap<>();
            for (ReportStore.DevicePrimitive p : zoo.primitives()) {
                DevicePrimitives.Builder device = devices.computeIfAbsent(p.fingerprint(),
                        f -> DevicePrimitives.newBuilder().setFingerprint(f));
                device.addSpeedups(PrimitiveSpeedup.newBuilder().setPrimitive(p.primitive()).setSpeedup(p.speedup()))
                        .setReports(Math.max(device.getReports(), p.reports())).setEngine(p.engine());
            }
            PrimitivesResponse.Builder response = PrimitivesResponse.newBuilder();
            devices.values().forEach(response::addDevices);
            return response.build();
        });
    }

    /** Runs a call; bad input the zoo refuses becomes INVALID_ARGUMENT with the reason, here and only here. */
    private static <T> Uni<T> call(Supplier<T> body) {
        return Uni.createFrom().item(() -> {
            try {
                return body.get();
            } catch (InvalidReportException e) {
                throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
            }
        });
    }

    /** An op's election, and its device kind's measured peak (0 when not measured: NaN is no answer on the wire). */
    private static ResolvedKernel resolved(OpSpec op, Optional<BestKernel> best, double kindPeakGflops) {
        ResolvedKernel.Builder resolved = ResolvedKernel.newBuilder().setOp(op)
                .setKindPeakGflops(Double.isNaN(kindPeakGflops) ? 0 : kindPeakGflops);
        best.ifPresent(b -> resolved.setFound(true).setKernel(b.kernel()).setMedianMs(b.medianMs()).setReports(b.reports())
                .setOrigins(b.origins()));
        return resolved.build();
    }
}
