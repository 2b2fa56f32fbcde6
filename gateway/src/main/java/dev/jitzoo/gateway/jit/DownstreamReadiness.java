package dev.jitzoo.gateway.jit;

import grpc.health.v1.HealthGrpc;
import grpc.health.v1.HealthOuterClass.HealthCheckRequest;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse.ServingStatus;
import io.quarkus.grpc.GrpcClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/** Ready only while the zoo, space and codegen services answer their grpc.health.v1 checks. */
@Readiness
@ApplicationScoped
public class DownstreamReadiness implements HealthCheck {

    private final Map<String, HealthGrpc.HealthBlockingStub> services;

    public DownstreamReadiness(@GrpcClient("zoo") HealthGrpc.HealthBlockingStub zoo,
                               @GrpcClient("space") HealthGrpc.HealthBlockingStub space,
                               @GrpcClient("codegen") HealthGrpc.HealthBlockingStub codegen) {
        this.services = Map.of("zoo", zoo, "space", space, "codegen", codegen);
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("kernel-services").up();
        services.forEach((name, health) -> {
            String status;
            try {
                status = health.withDeadlineAfter(2, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance()).getStatus().name();
            } catch (RuntimeException e) {
                status = "UNREACHABLE: " + e.getMessage();
            }
            response.withData(name, status);
            if (!ServingStatus.SERVING.name().equals(status)) {
                response.down();
            }
        });
        return response.build();
    }
}
