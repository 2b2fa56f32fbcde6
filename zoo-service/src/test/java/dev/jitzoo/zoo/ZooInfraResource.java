package dev.jitzoo.zoo;

import dev.jitzoo.localstack.TestInfra;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/** Points the zoo at real MongoDB-wire, Redis and Kafka servers (see {@link TestInfra}). */
public class ZooInfraResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        return Map.of(
                "quarkus.mongodb.connection-string", TestInfra.mongoUri(),
                "jitzoo.redis.uri", TestInfra.redisUri(),
                "kafka.bootstrap.servers", TestInfra.kafkaBootstrap());
    }

    @Override
    public void stop() {
        // the servers are shared by every test class of this JVM and stop when it exits
    }
}
