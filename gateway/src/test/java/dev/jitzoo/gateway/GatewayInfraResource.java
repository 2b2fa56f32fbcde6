package dev.jitzoo.gateway;

import dev.jitzoo.localstack.TestInfra;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/** A real Kafka for the gateway's report producer, a real Redis for its session store and a MongoDB for its tenants (see {@link TestInfra}). */
public class GatewayInfraResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        return Map.of("kafka.bootstrap.servers", TestInfra.kafkaBootstrap(), "jitzoo.redis.uri", TestInfra.redisUri(),
                "quarkus.mongodb.connection-string", TestInfra.mongoUri());
    }

    @Override
    public void stop() {
        // shared by the JVM; stops when it exits
    }
}
