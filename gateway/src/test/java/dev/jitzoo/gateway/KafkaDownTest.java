package dev.jitzoo.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.gateway.session.SessionStore;
import dev.jitzoo.localstack.TestInfra;
import dev.jitzoo.proto.gateway.v1.ErrorCode;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URL;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Nothing listens at the Kafka address: a report waits for the broker at most
 * {@code publish-timeout}, then is answered UNAVAILABLE, not acknowledged; the session goes on and
 * the same report may be sent again.
 */
@QuarkusTest
@TestProfile(KafkaDownTest.DeadKafka.class)
class KafkaDownTest {

    public static class DeadKafka implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("kafka.bootstrap.servers", "127.0.0.1:1", "jitzoo.gateway.publish-timeout", "PT2S",
                    "jitzoo.redis.uri", TestInfra.redisUri(), "quarkus.mongodb.connection-string", TestInfra.mongoUri());
        }
    }

    @TestHTTPResource("/v1/session")
    URL endpoint;

    @Inject
    SessionStore store;

    @Test
    void aReportIsAnsweredUnavailableAndMayBeSentAgain() throws Exception {
        String token = ReportPublishingTest.keep(store, "kafka-down-" + UUID.randomUUID(), 1);
        try (TestSocket page = new TestSocket(endpoint)) {
            ReportPublishingTest.resume(page, token);
            for (int attempt = 1; attempt <= 2; attempt++) {
                ReportPublishingTest.report(page, 0);
                ServerFrame answer = page.await(f -> f.hasError() || f.hasReportAck(), "an answer to report " + attempt);
                assertEquals(ErrorCode.ERROR_CODE_UNAVAILABLE, answer.getError().getCode(), answer.toString());
                assertEquals("report not stored, try again later", answer.getError().getMessage());
            }
            assertTrue(page.isOpen(), "the session goes on");
            assertTrue(TestSocket.metric(endpoint, "jitzoo_gateway_refused_total{code=\"unavailable\"}") >= 2);
        }
    }
}
