package dev.jitzoo.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.localstack.RedisProcess;
import dev.jitzoo.proto.codegen.v1.CodegenServiceGrpc;
import dev.jitzoo.proto.codegen.v1.GenerateRequest;
import dev.jitzoo.proto.codegen.v1.GenerateResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Redis is the kernels' cache, never a point of failure: with codegen's Redis frozen (connections
 * open, nothing answers, as in a partition) Generate still compiles and answers and codegen stays
 * ready; once Redis answers again and the cool-down has passed, kernels are cached again.
 */
@QuarkusTest
@QuarkusTestResource(value = CacheOutageTest.OwnRedis.class, restrictToAnnotatedClass = true)
class CacheOutageTest {

    /** A Redis of this test's own, to freeze; a short cool-down, so the test sees the cache come back. */
    public static class OwnRedis implements QuarkusTestResourceLifecycleManager {
        static RedisProcess redis;

        @Override
        public Map<String, String> start() {
            try {
                redis = RedisProcess.start();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return Map.of("jitzoo.redis.uri", redis.uri(), "jitzoo.codegen.cache-cool-down", "PT1S");
        }

        @Override
        public void stop() {
            redis.close();
        }
    }

    @TestHTTPResource("/")
    URL base;

    @Test
    void generatesWhileRedisIsFrozenStaysReadyAndCachesAgainAfter() throws Exception {
        ManagedChannel channel = ManagedChannelBuilder.forAddress(base.getHost(), base.getPort()).usePlaintext().build();
        try {
            var codegen = CodegenServiceGrpc.newBlockingStub(channel);
            int n = 13 + (int) (System.nanoTime() % 1000);
            GenerateRequest before = CodegenServiceTest.request(CodegenServiceTest.matmul(31, 17, n + 2000), 2, 8, 0);
            codegen.withDeadlineAfter(10, TimeUnit.SECONDS).generate(before); // the cache connected and used
            OwnRedis.redis.freeze();
            try {
                GenerateRequest request = CodegenServiceTest.request(CodegenServiceTest.matmul(31, 17, n), 2, 8, 0);
                GenerateResponse during = codegen.withDeadlineAfter(10, TimeUnit.SECONDS).generate(request);
                assertTrue(during.getGenerationMicros() > 0 && !during.getArtifact().getWasm().isEmpty(), "compiled without the cache");
                GenerateResponse again = codegen.withDeadlineAfter(10, TimeUnit.SECONDS).generate(request);
                assertEquals(during.getArtifact(), again.getArtifact(), "compiled again, the same bytes");
                HttpResponse<String> ready = HttpClient.newHttpClient().send(
                        HttpRequest.newBuilder(base.toURI().resolve("/q/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, ready.statusCode(), "codegen stays ready (in its Service's endpoints) without its cache: " + ready.body());
            } finally {
                OwnRedis.redis.thaw();
            }
            Thread.sleep(1_200); // past the cool-down
            GenerateRequest after = CodegenServiceTest.request(CodegenServiceTest.matmul(31, 17, n + 1000), 2, 8, 0);
            assertTrue(codegen.withDeadlineAfter(10, TimeUnit.SECONDS).generate(after).getGenerationMicros() > 0, "compiled");
            assertEquals(0, codegen.withDeadlineAfter(10, TimeUnit.SECONDS).generate(after).getGenerationMicros(), "cached again");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
