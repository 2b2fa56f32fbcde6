package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.ErrorCode;
import dev.jitzoo.proto.gateway.v1.Report;
import dev.jitzoo.proto.gateway.v1.Resume;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The session store's Redis is dead (nothing listens at its address): a Resume is refused with
 * RESUME_REJECTED, not fatal, and the connection still serves the frames after it.
 */
@QuarkusTest
@TestProfile(SessionStoreDownTest.DeadRedis.class)
class SessionStoreDownTest {

    public static class DeadRedis implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("kafka.bootstrap.servers", TestInfra.kafkaBootstrap(), "jitzoo.redis.uri", "redis://127.0.0.1:1");
        }
    }

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Test
    void aResumeIsRefusedAndTheConnectionGoesOn() throws Exception {
        List<ServerFrame> frames = new ArrayList<>();
        CompletableFuture<Integer> closed = new CompletableFuture<>();
        WebSocket.Listener listener = new WebSocket.Listener() {
            @Override
            public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
                byte[] bytes = new byte[data.remaining()];
                data.get(bytes);
                try {
                    frames.add(ServerFrame.parseFrom(bytes));
                } catch (Exception e) {
                    closed.completeExceptionally(e);
                }
                ws.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
                closed.complete(statusCode);
                return null;
            }
        };
        URI uri = URI.create(endpoint.toString().replace("http://", "ws://"));
        WebSocket ws = HttpClient.newHttpClient().newWebSocketBuilder().buildAsync(uri, listener).get(10, TimeUnit.SECONDS);
        ws.sendBinary(ByteBuffer.wrap(ClientFrame.newBuilder().setResume(Resume.newBuilder().setToken("t").setCredits(2))
                .build().toByteArray()), true).get(10, TimeUnit.SECONDS);
        ws.sendBinary(ByteBuffer.wrap(ClientFrame.newBuilder().setReport(Report.newBuilder()).build().toByteArray()), true)
                .get(10, TimeUnit.SECONDS);
        assertEquals(1008, closed.get(20, TimeUnit.SECONDS));
        assertEquals(ErrorCode.ERROR_CODE_RESUME_REJECTED, frames.get(0).getError().getCode());
        assertEquals("sessions cannot be resumed now: start a new one with Hello", frames.get(0).getError().getMessage());
        assertEquals(ErrorCode.ERROR_CODE_PROTOCOL, frames.get(1).getError().getCode());
    }
}
