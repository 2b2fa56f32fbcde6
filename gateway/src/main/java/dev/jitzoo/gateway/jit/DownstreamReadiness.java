package dev.jitzoo.gateway.jit;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.gateway.session.Drain;
import grpc.health.v1.Health;
import grpc.health.v1.HealthOuterClass.HealthCheckRequest;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse.ServingStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready while the gateway is not draining, whatever its kernel services answer: without the zoo a
 * session starts from the space's first candidate, without the space from the safe default, and
 * without codegen a kind whose kernels are in the gateway's memory ({@link ArtifactCache}) is
 * still welcomed and every session's reports are still stored, while a Hello that needs a new
 * kernel is answered {@code UNAVAILABLE} (the SDK tries again with backoff, inferring meanwhile).
 * A gateway taken out of service for a downstream would turn away all of that, and with one
 * codegen outage every gateway at once. What each service last answered its grpc.health.v1 check
 * (asked every {@code downstream-check-interval} in the background, so a probe never waits on a
 * slow service) is in the check's data and in {@code jitzoo_gateway_downstream_serving{service}}
 * (1 serving, 0 not).
 */
@Readiness
@ApplicationScoped
public class DownstreamReadiness implements HealthCheck {

    /** How long one health call may take before the service counts as unreachable. */
    private static final Duration CHECK_DEADLINE = Duration.ofSeconds(2);
    private static final String UNKNOWN = "UNKNOWN: not asked yet";

    private final Map<String, Health> services;
    private final Map<String, String> statuses = new ConcurrentHashMap<>();
    private final Drain drain;

    public DownstreamReadiness(@GrpcClient("zoo") Health zoo, @GrpcClient("space") Health space,
                               @GrpcClient("codegen") Health codegen, Drain drain, MeterRegistry metrics) {
        this.services = Map.of("zoo", zoo, "space", space, "codegen", codegen);
        this.drain = drain;
        services.keySet().forEach(name -> {
            statuses.put(name, UNKNOWN);
            // a Supplier gauge holds its function strongly: the value never depends on a weak reference
            Gauge.builder("jitzoo.gateway.downstream.serving", () -> serving(statuses.get(name)) ? 1 : 0)
                    .tag("service", name).description("1 while the service answers its health check SERVING, else 0")
                    .register(metrics);
        });
    }

    void start(@Observes StartupEvent started, Vertx vertx, GatewayConfig config) {
        check();
        vertx.setPeriodic(config.downstreamCheckInterval().toMillis(), id -> check());
    }

    /** Asks every service at once, without blocking: each answer (or its failure) lands when it comes. */
    void check() {
        services.forEach((name, health) -> health.check(HealthCheckRequest.getDefaultInstance())
                .ifNoItem().after(CHECK_DEADLINE).fail()
                .subscribe().with(answer -> statuses.put(name, answer.getStatus().name()),
                        failure -> statuses.put(name, "UNREACHABLE: " + failure.getMessage())));
    }

    private static boolean serving(String status) {
        return ServingStatus.SERVING.name().equals(status);
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("kernel-services").up();
        if (drain.draining()) {
            response.down().withData("draining", true);
        }
        new TreeMap<>(statuses).forEach(response::withData);
        return response.build();
    }
}
