package dev.jitzoo.space.grpc;

import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.space.v1.SpaceService;
import dev.jitzoo.space.SpaceConfig;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.domain.SkeletonSpace;
import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Uni;

/** gRPC edge of the space service: converts requests and errors, nothing more. */
@GrpcService
public class SpaceGrpcService implements SpaceService {

    private final SkeletonSpace space;

    public SpaceGrpcService(SpaceConfig config) {
        this.space = new SkeletonSpace(config.maxCandidates());
    }

    @Override
    public Uni<ComposeResponse> compose(ComposeRequest request) {
        return Uni.createFrom().item(() -> {
            if (!request.hasOp()) {
                throw Status.INVALID_ARGUMENT.withDescription("op is required").asRuntimeException();
            }
            try {
                return space.compose(request.getOp(), request.getDevice());
            } catch (InvalidOpException e) {
                throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
            }
        });
    }
}
