package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.gateway.session.SessionRegistry;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.ErrorCode;
import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway's connection limits over real WebSockets, each refusal with its Error frame and close
 * code while the other connections go on: too many from one address (1008), a full gateway (1013,
 * try again later), and an idle connection (1001, after the heartbeat's pings kept it alive but
 * the client sent no frame).
 */
@QuarkusTest
@TestProfile(ConnectionLimitsTest.Small.class)
@QuarkusTestResource(value = FakeDownstreams.class, restrictToAnnotatedClass = true)
class ConnectionLimitsTest {

    /** Four connections at most, two per address (read from X-Forwarded-For), idle after 2 s, pings every second. */
    public static class Small implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jitzoo.gateway.max-connections", "4", "jitzoo.gateway.max-connections-per-address", "2",
                    "jitzoo.gateway.trust-forwarded-for", "true", "jitzoo.gateway.idle-timeout", "PT2S",
                    "jitzoo.gateway.heartbeat", "PT1S");
        }
    }

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Inject
    SessionRegistry registry;

    @BeforeEach
    void noConnectionLeft() throws InterruptedException {
        Instant deadline = Instant.now().plusSeconds(10);
        while (registry.connections() > 0 && Instant.now().isBefore(deadline)) {
            Thread.sleep(50);
        }
        assertEquals(0, registry.connections(), "the previous test's connections are closed");
    }

    /**
     * Addresses are read from the right of X-Forwarded-For (the entry the trusted proxy appended,
     * not one the client wrote first), and an IPv6 /64 is one address: three clients of one prefix,
     * each writing a different forged first entry, are refused as one.
     */
    @Test
    void aSlash64IsOneAddressAndTheClientsOwnForwardedForEntriesDoNotCount() throws Exception {
        try (TestSocket first = new TestSocket(endpoint, "1.1.1.1, 2001:db8:7:7::1");
             TestSocket second = new TestSocket(endpoint, "2.2.2.2, 2001:db8:7:7:ffff::2");
             TestSocket third = new TestSocket(endpoint, "3.3.3.3, 2001:db8:7:7:1:2:3:4")) {
            ServerFrame refused = third.await(ServerFrame::hasError, "the refusal");
            assertEquals(ErrorCode.ERROR_CODE_TOO_MANY_CONNECTIONS, refused.getError().getCode());
            assertEquals(1008, third.closed().code());
            for (TestSocket served : List.of(first, second)) {
                served.send(hello());
                served.await(ServerFrame::hasWelcome, "Welcome");
            }
        }
    }

    @Test
    void aThirdConnectionFromOneAddressIsRefusedAndTheOthersGoOn() throws Exception {
        try (TestSocket first = new TestSocket(endpoint, "10.0.0.1"); TestSocket second = new TestSocket(endpoint, "10.0.0.1");
             TestSocket third = new TestSocket(endpoint, "10.0.0.1"); TestSocket elsewhere = new TestSocket(endpoint, "10.0.0.2")) {
            ServerFrame refused = third.await(ServerFrame::hasError, "the refusal");
            assertEquals(ErrorCode.ERROR_CODE_TOO_MANY_CONNECTIONS, refused.getError().getCode());
            assertEquals("more than 2 connections from one network address", refused.getError().getMessage());
            assertEquals(1008, third.closed().code());
            assertTrue(TestSocket.metric(endpoint, "jitzoo_gateway_refused_total{code=\"too_many_connections\"}") >= 1);
            for (TestSocket served : List.of(first, second, elsewhere)) {
                served.send(hello());
                served.await(ServerFrame::hasWelcome, "Welcome");
            }
        }
    }

    @Test
    void aFullGatewayAsksTheNextClientToTryAgainLater() throws Exception {
        List<TestSocket> sockets = new ArrayList<>();
        try {
            for (int i = 1; i <= 4; i++) {
                sockets.add(new TestSocket(endpoint, "10.1.0." + i));
            }
            TestSocket fifth = new TestSocket(endpoint, "10.1.0.5");
            sockets.add(fifth);
            ServerFrame refused = fifth.await(ServerFrame::hasError, "the refusal");
            assertEquals(ErrorCode.ERROR_CODE_OVERLOADED, refused.getError().getCode());
            assertEquals(1013, fifth.closed().code(), "try again later");
            assertTrue(TestSocket.metric(endpoint, "jitzoo_gateway_refused_total{code=\"overloaded\"}") >= 1);
            assertEquals(4, TestSocket.metric(endpoint, "jitzoo_gateway_connections"), "the four admitted");
            sockets.get(0).send(hello());
            sockets.get(0).await(ServerFrame::hasWelcome, "Welcome");
        } finally {
            sockets.forEach(TestSocket::close);
        }
    }

    @Test
    void aClientThatSendsNothingIsClosedAsIdleThoughItAnswersPings() throws Exception {
        try (TestSocket quiet = new TestSocket(endpoint, "10.2.0.1")) {
            quiet.send(hello());
            quiet.await(ServerFrame::hasWelcome, "Welcome");
            ServerFrame idle = quiet.await(f -> f.hasError(), "the idle notice");
            assertEquals(ErrorCode.ERROR_CODE_IDLE, idle.getError().getCode());
            assertTrue(idle.getError().getMessage().startsWith("no frame for 2 s"), idle.getError().getMessage());
            assertEquals(1001, quiet.closed().code());
            assertTrue(quiet.pings() >= 1, "the heartbeat pinged it, and its pongs did not count as frames");
            assertTrue(TestSocket.metric(endpoint, "jitzoo_gateway_refused_total{code=\"idle\"}") >= 1);
        }
    }

    private static ClientFrame.Builder hello() {
        OpSpec op = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(33).addShape(8).addShape(8).build();
        return ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                .setDevice(DeviceProfile.newBuilder().setFingerprint("limits-test")).addOps(op).setCredits(10));
    }
}
