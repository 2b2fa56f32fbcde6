package dev.jitzoo.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.codegen.v1.CodegenServiceGrpc;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Codegen started while its Redis cannot be reached: it is ready and compiles every kernel asked for. */
@QuarkusTest
@QuarkusTestResource(value = RedisDownAtStartTest.NoRedis.class, restrictToAnnotatedClass = true)
class RedisDownAtStartTest {

    /** A Redis URI where nothing listens. */
    public static class NoRedis implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            try (ServerSocket socket = new ServerSocket(0)) {
                return Map.of("jitzoo.redis.uri", "redis://127.0.0.1:" + socket.getLocalPort());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
            // nothing was started
        }
    }

    @TestHTTPResource("/")
    URL base;

    @Test
    void servesAndIsReadyWithoutRedis() throws Exception {
        ManagedChannel channel = ManagedChannelBuilder.forAddress(base.getHost(), base.getPort()).usePlaintext().build();
        try {
            var codegen = CodegenServiceGrpc.newBlockingStub(channel);
            GenerateRequest request = CodegenServiceTest.request(CodegenServiceTest.matmul(24, 40, 56), 2, 8, 0);
            GenerateResponse first = codegen.withDeadlineAfter(10, TimeUnit.SECONDS).generate(request);
            GenerateResponse second = codegen.withDeadlineAfter(10, TimeUnit.SECONDS).generate(request);
            assertTrue(first.getGenerationMicros() > 0 && second.getGenerationMicros() > 0, "both compiled: there is no cache; " + first.getGenerationMicros() + ", " + second.getGenerationMicros());
            assertEquals(first.getArtifact(), second.getArtifact());
            HttpResponse<String> ready = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(base.toURI().resolve("/q/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ready.statusCode(), ready.body());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
