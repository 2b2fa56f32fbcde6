package dev.jitzoo.zoo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.localstack.RedisProcess;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.Measurement;
import dev.jitzoo.proto.zoo.v1.ResolveRequest;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import dev.jitzoo.proto.zoo.v1.ZooServiceGrpc;
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
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Redis is a cache, never a point of failure: with the zoo's Redis frozen (connections open,
 * nothing answers, as in a partition) Resolve still answers from MongoDB and reports are still
 * ingested and elected, and the zoo stays ready; once Redis answers again, the entry it held from
 * before is not served.
 */
@QuarkusTest
@QuarkusTestResource(value = CacheOutageTest.OwnRedis.class, restrictToAnnotatedClass = true)
class CacheOutageTest {

    /** A Redis of this test's own, to freeze. */
    public static class OwnRedis implements QuarkusTestResourceLifecycleManager {
        static RedisProcess redis;

        @Override
        public Map<String, String> start() {
            try {
                redis = RedisProcess.start();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return Map.of("quarkus.mongodb.connection-string", TestInfra.mongoUri(), "jitzoo.redis.uri", redis.uri(),
                    "kafka.bootstrap.servers", TestInfra.kafkaBootstrap());
        }

        @Override
        public void stop() {
            redis.close();
        }
    }

    private static final OpSpec OP = OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL)
            .addShape(16).addShape(32).addShape(48).build();

    @TestHTTPResource("/")
    URL base;

    @Test
    void resolveAnswersFromMongoWhileRedisIsFrozenAndTheStaleEntryIsNotServedAfter() throws Exception {
        DeviceProfile device = DeviceProfile.newBuilder().setFingerprint("outage-" + UUID.randomUUID()).build();
        ManagedChannel channel = ManagedChannelBuilder.forAddress(base.getHost(), base.getPort()).usePlaintext().build();
        try {
            publish(report(device, "s1", "k-first", 2.0));
            assertEquals("k-first", await(channel, device, "k-first").getKernel().getKernelId()); // cached now

            OwnRedis.redis.freeze();
            try {
                publish(report(device, "s2", "k-faster", 1.0));
                ResolvedKernel during = await(channel, device, "k-faster");
                assertEquals(1.0, during.getMedianMs(), 1e-9, "ingested and elected, and resolved from MongoDB");
                HttpResponse<String> ready = HttpClient.newHttpClient().send(
                        HttpRequest.newBuilder(base.toURI().resolve("/q/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, ready.statusCode(), "the zoo stays ready (in its Service's endpoints) without its cache: " + ready.body());
            } finally {
                OwnRedis.redis.thaw();
            }
            // Redis answers again: every answer from now on is the new best, never the entry it held
            Instant until = Instant.now().plusSeconds(8);
            while (Instant.now().isBefore(until)) {
                assertEquals("k-faster", resolve(channel, device).getKernel().getKernelId());
                Thread.sleep(200);
            }
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static ResolvedKernel resolve(ManagedChannel channel, DeviceProfile device) {
        return ZooServiceGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
                .resolve(ResolveRequest.newBuilder().setDevice(device).setBackend(Backend.BACKEND_WASM).addOps(OP).build())
                .getKernels(0);
    }

    private static ResolvedKernel await(ManagedChannel channel, DeviceProfile device, String kernelId) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
        ResolvedKernel resolved = resolve(channel, device);
        while (!(resolved.getFound() && resolved.getKernel().getKernelId().equals(kernelId))) {
            assertTrue(Instant.now().isBefore(deadline), "never elected " + kernelId + "; last answer: " + resolved);
            Thread.sleep(100);
            resolved = resolve(channel, device);
        }
        return resolved;
    }

    private static KernelReport report(DeviceProfile device, String session, String kernelId, double ms) {
        return KernelReport.newBuilder().setSessionId(session).setDevice(device).setOp(OP).setBackend(Backend.BACKEND_WASM)
                .setReceivedAtMs(System.currentTimeMillis())
                .addRanked(Measurement.newBuilder().setMedianMs(ms).setSamples(5).setKernel(KernelRef.newBuilder()
                        .setKernelId(kernelId).setBackend(Backend.BACKEND_WASM).setOp(OP).setAbiVersion(1)))
                .build();
    }

    private static void publish(KernelReport report) throws Exception {
        try (var producer = new KafkaProducer<>(Map.<String, Object>of("bootstrap.servers", TestInfra.kafkaBootstrap()),
                new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>("kernel-reports", "test", report.toByteArray())).get(10, TimeUnit.SECONDS);
        }
    }
}
