package dev.jitzoo.space.grpc;

import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.space.v1.DynamicRequest;
import dev.jitzoo.proto.space.v1.DynamicResponse;
import dev.jitzoo.proto.space.v1.SpaceService;
import dev.jitzoo.space.SpaceConfig;
import dev.jitzoo.space.device.InvalidDeviceException;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.dynamic.DynamicPlans;
import dev.jitzoo.space.dynamic.Thresholds;
import dev.jitzoo.space.extended.ExtendedSpace;
import dev.jitzoo.space.extended.ZooLookup;
import dev.jitzoo.space.infra.FleetPrimitives;
import dev.jitzoo.space.lite.LiteSpace;
import dev.jitzoo.space.plans.Planner;
import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Uni;

/**
 * gRPC edge of the space service: converts requests and errors, and asks the zoo for the
 * exploitation set (through the {@link ZooLookup} port). A zoo that does not answer costs the device its neighbours' kernels, not its
 * space: the lite space comes back alone, with the reason.
 */
@GrpcService
public class SpaceGrpcService implements SpaceService {

    private final LiteSpace configured;
    private final ExtendedSpace extended;
    private final FleetPrimitives primitives;
    private final ZooLookup zoo;
    private final Planner planner;

    public SpaceGrpcService(SpaceConfig config, FleetPrimitives primitives, ZooLookup zoo, Planner planner) {
        this.configured = new LiteSpace(config.relaxation(), config.maxCandidates(), primitives.table());
        this.extended = new ExtendedSpace(config.settledOrigins());
        this.primitives = primitives;
        this.zoo = zoo;
        this.planner = planner;
    }

    @Override
    public Uni<ComposeResponse> compose(ComposeRequest request) {
        String missing = missing(request.hasOp(), request.hasDevice());
        if (missing != null) {
            return invalid(missing);
        }
        ComposeResponse lite;
        try {
            lite = configured.withPrimitives(primitives.table()).compose(request.getOp(), request.getDevice(), request.getBackend());
        } catch (InvalidOpException | InvalidDeviceException e) {
            return invalid(e.getMessage());
        }
        Uni<ExtendedSpace.ZooAnswer> answer;
        if (request.getDevice().getFingerprint().isBlank()) {
            answer = Uni.createFrom().item(ExtendedSpace.ZooAnswer.unavailable("the device has no fingerprint to look up"));
        } else {
            answer = Uni.createFrom().completionStage(() -> zoo.similar(
                    ExtendedSpace.similarRequest(lite, request.getOp(), request.getDevice(), request.getBackend()).toBuilder()
                            .setTenant(request.getTenant()).build()));
        }
        return answer.map(zooAnswer -> extended.extend(lite, zooAnswer, request.getOp(), request.getDevice(), request.getBackend()));
    }

    /** A plan over seconds of work: composed by the {@link Planner} (off the event loop, bounded, remembered). */
    @Override
    public Uni<DynamicResponse> dynamic(DynamicRequest request) {
        String missing = missing(request.hasOp(), request.hasDevice());
        if (missing != null) {
            return invalid(missing);
        }
        LiteSpace space = configured.withPrimitives(primitives.table());
        return Uni.createFrom().completionStage(() -> planner.plan(request, () -> {
            try {
                return DynamicPlans.compose(request.getOp(), request.getLo(), request.getHi(), request.getDevice(), space, Thresholds.WASM);
            } catch (InvalidOpException | InvalidDeviceException e) {
                throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
            }
        })).onFailure(java.util.concurrent.CompletionException.class).transform(Throwable::getCause);
    }

    /** What a request lacks of the two every call needs, or null. */
    private static String missing(boolean hasOp, boolean hasDevice) {
        return !hasOp ? "op is required" : !hasDevice ? "device is required" : null;
    }

    private static <T> Uni<T> invalid(String reason) {
        return Uni.createFrom().failure(Status.INVALID_ARGUMENT.withDescription(reason).asRuntimeException());
    }
}
