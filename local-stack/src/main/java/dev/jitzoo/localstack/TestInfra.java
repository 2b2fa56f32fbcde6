package dev.jitzoo.localstack;

import java.util.function.Supplier;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.mongodb.MongoDBContainer;

/**
 * Where tests find the real parts, in this order: an address given in the environment
 * ({@code JITZOO_TEST_MONGO_URI}, {@code JITZOO_TEST_REDIS_URI}, {@code JITZOO_TEST_KAFKA_BOOTSTRAP}),
 * a container when a Docker engine runs, else a local server (embedded MongoDB-wire server,
 * a redis-server child process, Kafka's in-JVM KRaft cluster). Each part starts once per JVM
 * and stops when the JVM exits.
 */
public final class TestInfra {

    private static String mongoUri;
    private static String redisUri;
    private static String kafkaBootstrap;
    private static Boolean docker;

    private TestInfra() {
    }

    public static synchronized String mongoUri() {
        if (mongoUri == null) {
            mongoUri = pick("JITZOO_TEST_MONGO_URI", () -> {
                MongoDBContainer container = new MongoDBContainer("mongo:7.0");
                container.start();
                return container.getConnectionString();
            }, () -> EmbeddedMongo.inMemory().uri());
        }
        return mongoUri;
    }

    public static synchronized String redisUri() {
        if (redisUri == null) {
            redisUri = pick("JITZOO_TEST_REDIS_URI", () -> {
                GenericContainer<?> container = new GenericContainer<>("redis:7-alpine").withExposedPorts(6379);
                container.start();
                return "redis://" + container.getHost() + ":" + container.getMappedPort(6379);
            }, () -> unchecked(() -> RedisProcess.start().uri()));
        }
        return redisUri;
    }

    public static synchronized String kafkaBootstrap() {
        if (kafkaBootstrap == null) {
            kafkaBootstrap = pick("JITZOO_TEST_KAFKA_BOOTSTRAP", () -> {
                KafkaContainer container = new KafkaContainer("apache/kafka:4.1.1");
                container.start();
                return container.getBootstrapServers();
            }, () -> unchecked(() -> {
                KafkaTestCluster cluster = KafkaTestCluster.start();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> unchecked(() -> {
                    cluster.close();
                    return null;
                })));
                return cluster.bootstrapServers();
            }));
        }
        return kafkaBootstrap;
    }

    private static String pick(String envVar, Supplier<String> container, Supplier<String> local) {
        String given = System.getenv(envVar);
        if (given != null && !given.isBlank()) {
            return given;
        }
        if (docker == null) {
            docker = DockerClientFactory.instance().isDockerAvailable();
        }
        return docker ? container.get() : local.get();
    }

    private interface ThrowingSupplier<T> {
        T get() throws Exception;
    }

    private static <T> T unchecked(ThrowingSupplier<T> supplier) {
        try {
            return supplier.get();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }
}
