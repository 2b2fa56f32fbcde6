package dev.jitzoo.space.grpc;

import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.space.v1.SpaceService;
import dev.jitzoo.space.SpaceConfig;
import dev.jitzoo.space.device.InvalidDeviceException;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.lite.LiteSpace;
import dev.jitzoo.space.primitives.PrimitiveTable;
import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Uni;
import java.io.IOException;

/** gRPC edge of the space service: converts requests and errors, nothing more. */
@GrpcService
public class SpaceGrpcService implements SpaceService {

    private final LiteSpace space;

    public SpaceGrpcService(SpaceConfig config) throws IOException {
        this.space = new LiteSpace(config.relaxation(), config.maxCandidates(),
                PrimitiveTable.pooled(config.microbenchResults().orElse(null), config.primitiveThreshold()));
    }

    @Override
    public Uni<ComposeResponse> compose(ComposeRequest request) {
        return Uni.createFrom().item(() -> {
            if (!request.hasOp()) {
                throw Status.INVALID_ARGUMENT.withDescription("op is required").asRuntimeException();
            }
            if (!request.hasDevice()) {
                throw Status.INVALID_ARGUMENT.withDescription("device is required").asRuntimeException();
            }
            try {
                return space.compose(request.getOp(), request.getDevice(), request.getBackend());
            } catch (InvalidOpException | InvalidDeviceException e) {
                throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
            }
        });
    }
}
