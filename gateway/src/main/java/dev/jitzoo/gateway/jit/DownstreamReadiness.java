package dev.jitzoo.gateway.jit;

import grpc.health.v1.HealthGrpc;
import grpc.health.v1.HealthOuterClass.HealthCheckRequest;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse.ServingStatus;
import dev.jitzoo.gateway.session.Drain;
import io.quarkus.grpc.GrpcClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready while the gateway can serve a session: codegen answers its grpc.health.v1 check (no
 * Welcome without it) and the gateway is not draining. The zoo and the space are reported but
 * not required: without the zoo a session starts from the space's first candidate, without the
 * space from the safe default, and a gateway taken out of service for them would turn away
 * sessions it can serve.
 */
@Readiness
@ApplicationScoped
public class DownstreamReadiness implements HealthCheck {

    /** The services the gateway cannot serve a session without. */
    private static final Set<String> REQUIRED = Set.of("codegen");

    private final Map<String, HealthGrpc.HealthBlockingStub> services;
    private final Drain drain;

    public DownstreamReadiness(@GrpcClient("zoo") HealthGrpc.HealthBlockingStub zoo,
                               @GrpcClient("space") HealthGrpc.HealthBlockingStub space,
                               @GrpcClient("codegen") HealthGrpc.HealthBlockingStub codegen,
                               Drain drain) {
        this.services = Map.of("zoo", zoo, "space", space, "codegen", codegen);
        this.drain = drain;
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("kernel-services").up();
        if (drain.draining()) {
            response.down().withData("draining", true);
        }
        services.forEach((name, health) -> {
            String status;
            try {
                status = health.withDeadlineAfter(2, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance()).getStatus().name();
            } catch (RuntimeException e) {
                status = "UNREACHABLE: " + e.getMessage();
            }
            response.withData(name, status);
            if (REQUIRED.contains(name) && !ServingStatus.SERVING.name().equals(status)) {
                response.down();
            }
        });
        return response.build();
    }
}
