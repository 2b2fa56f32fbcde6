package dev.jitzoo.zoo.grpc;

import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolveResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.ZooService;
import dev.jitzoo.zoo.domain.InvalidReportException;
import dev.jitzoo.zoo.domain.Zoo;
import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Uni;

/** gRPC edge of the zoo: converts requests and errors, nothing more. */
@GrpcService
public class ZooGrpcService implements ZooService {

    private final Zoo zoo;

    public ZooGrpcService(Zoo zoo) {
        this.zoo = zoo;
    }

    @Override
    @Blocking
    public Uni<ResolveResponse> resolve(ResolveRequest request) {
        return Uni.createFrom().item(() -> {
            try {
                ResolveResponse.Builder response = ResolveResponse.newBuilder();
                for (OpSpec op : request.getOpsList()) {
                    ResolvedKernel.Builder resolved = ResolvedKernel.newBuilder().setOp(op);
                    zoo.resolve(op, request.getBackend(), request.getDevice()).ifPresent(best -> resolved
                            .setFound(true)
                            .setKernel(best.kernel())
                            .setMedianMs(best.medianMs())
                            .setReports(best.reports()));
                    response.addKernels(resolved);
                }
                return response.build();
            } catch (InvalidReportException e) {
                throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
            }
        });
    }
}
