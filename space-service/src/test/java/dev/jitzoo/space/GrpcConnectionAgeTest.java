package dev.jitzoo.space;

import static org.junit.jupiter.api.Assertions.assertEquals;

import grpc.health.v1.HealthGrpc;
import com.google.common.util.concurrent.ListenableFuture;
import grpc.health.v1.HealthOuterClass.HealthCheckRequest;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse;
import grpc.health.v1.HealthOuterClass.HealthCheckResponse.ServingStatus;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * gRPC's max connection age on the service's HTTP server (GrpcConnectionAge): a client's
 * connection past it is told to go (GOAWAY) on its next call, which still completes; the client's
 * channel lets the connection go and its next call connects anew, asking DNS again (how callers
 * find the pods a scale-out adds).
 */
@QuarkusTest
@TestProfile(GrpcConnectionAgeTest.ShortLived.class)
class GrpcConnectionAgeTest {

    public static class ShortLived implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jitzoo.grpc.max-connection-age", "PT0.5S");
        }
    }

    private static final HealthCheckRequest ASK = HealthCheckRequest.getDefaultInstance();

    @TestHTTPResource("/")
    URL base;

    private ManagedChannel channel;

    @BeforeEach
    void connect() {
        channel = ManagedChannelBuilder.forAddress(base.getHost(), base.getPort()).usePlaintext().build();
    }

    @AfterEach
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /**
     * Calls on their way while the connection is retired all complete: the server's first GOAWAY
     * promises to serve every stream the client has opened (a single GOAWAY naming the last stream
     * it has seen would refuse those still on the wire, and the client would fail them UNAVAILABLE).
     */
    @Test
    void callsInFlightWhileAConnectionIsRetiredAllComplete() throws Exception {
        HealthGrpc.HealthFutureStub health = HealthGrpc.newFutureStub(channel);
        int failed = 0;
        long until = System.nanoTime() + 3_000_000_000L; // several ages: several connections retired under load
        while (System.nanoTime() < until) {
            List<ListenableFuture<HealthCheckResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                calls.add(health.withDeadlineAfter(5, TimeUnit.SECONDS).check(ASK));
            }
            for (ListenableFuture<HealthCheckResponse> call : calls) {
                try {
                    assertEquals(ServingStatus.SERVING, call.get().getStatus());
                } catch (ExecutionException e) {
                    failed++;
                }
            }
        }
        assertEquals(0, failed, "calls that failed while connections were retired");
    }

    @Test
    void aConnectionPastItsAgeIsToldToGoAndTheNextCallConnectsAnew() throws Exception {
        assertEquals(ServingStatus.SERVING, check());
        assertEquals(ServingStatus.SERVING, check());
        assertEquals(ConnectivityState.READY, channel.getState(false), "a young connection is kept");

        Thread.sleep(700); // past the age, drawn within 10% of 0.5 s
        assertEquals(ServingStatus.SERVING, check(), "the call that finds the connection too old completes");
        ConnectivityState state = channel.getState(false);
        for (long until = System.nanoTime() + 5_000_000_000L; state == ConnectivityState.READY && System.nanoTime() < until; ) {
            Thread.sleep(20);
            state = channel.getState(false);
        }
        assertEquals(ConnectivityState.IDLE, state, "the client let the old connection go");

        assertEquals(ServingStatus.SERVING, check());
        assertEquals(ConnectivityState.READY, channel.getState(false), "the next call connected anew");
    }

    private ServingStatus check() {
        return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS).check(ASK).getStatus();
    }
}
