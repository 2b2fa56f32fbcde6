package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.gateway.session.Drain;
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
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The gateway's graceful shutdown, as SIGTERM starts it: every client is told to go (Goaway), then
 * its connection closes with 1001, a session's and a bare one's alike; a connection opened while
 * the gateway drains is refused with the reason. (Its own application: a drained gateway stays so.)
 */
@QuarkusTest
@TestProfile(DrainTest.Draining.class)
@QuarkusTestResource(value = FakeDownstreams.class, restrictToAnnotatedClass = true)
class DrainTest {

    /** A profile of its own, so that no other test meets this drained gateway. */
    public static class Draining implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jitzoo.gateway.drain-timeout", "PT2S");
        }
    }

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Inject
    Drain drain;

    private HttpResponse<String> ready() throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(endpoint.toURI().resolve("/q/health/ready")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void clientsAreToldToGoThenClosedAndNewOnesRefused() throws Exception {
        try (TestSocket session = new TestSocket(endpoint); TestSocket bare = new TestSocket(endpoint)) {
            OpSpec op = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(33).addShape(8).addShape(8).build();
            session.send(ClientFrame.newBuilder().setHello(Hello.newBuilder().setProtocolVersion(1).setBackend(Backend.BACKEND_WASM)
                    .setDevice(DeviceProfile.newBuilder().setFingerprint("drain-test")).addOps(op).setCredits(10)));
            session.await(ServerFrame::hasOffersDone, "the session's offers");
            assertEquals(200, ready().statusCode(), "codegen serves: ready");

            Thread draining = new Thread(() -> {
                try {
                    drain.drain();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            draining.start();
            for (TestSocket socket : new TestSocket[] {session, bare}) {
                ServerFrame goaway = socket.await(ServerFrame::hasGoaway, "Goaway");
                assertTrue(goaway.getGoaway().getReason().startsWith("gateway shutting down"), goaway.toString());
                assertEquals(1001, socket.closed().code());
            }
            draining.join(10_000);
            HttpResponse<String> outOfService = ready();
            assertEquals(503, outOfService.statusCode(), "out of service while it drains");
            assertTrue(outOfService.body().contains("\"draining\": true"), outOfService.body());

            try (TestSocket late = new TestSocket(endpoint)) {
                ServerFrame refused = late.await(ServerFrame::hasError, "the refusal");
                assertEquals(ErrorCode.ERROR_CODE_UNAVAILABLE, refused.getError().getCode());
                assertEquals("this gateway is shutting down: connect again and resume the session", refused.getError().getMessage());
                assertEquals(1001, late.closed().code());
            }
        }
    }
}
