package dev.jitzoo.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.Uuid;

/**
 * A one-node KRaft Kafka (broker and controller in one process) for {@code ./jitzoo up}: writes its
 * configuration, formats the storage on first start, then runs the broker until killed.
 *
 * <pre>java -cp 'lib/*' dev.jitzoo.localstack.LocalKafka PORT CONTROLLER_PORT DATA_DIR</pre>
 */
public final class LocalKafka {

    private LocalKafka() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: LocalKafka PORT CONTROLLER_PORT DATA_DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[2]).toAbsolutePath();
        Files.createDirectories(dir);
        Path conf = dir.resolveSibling("kafka.properties");
        Files.writeString(conf, properties(Integer.parseInt(args[0]), Integer.parseInt(args[1]), dir));
        if (!Files.exists(dir.resolve("meta.properties"))) {
            int status = kafka.tools.StorageTool.execute(
                    new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c", conf.toString()}, System.out);
            if (status != 0) {
                System.err.println("Kafka storage format failed in " + dir);
                System.exit(status);
            }
        }
        kafka.Kafka.main(new String[] {conf.toString()});
    }

    static String properties(int port, int controllerPort, Path dir) {
        return String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "inter.broker.listener.name=PLAINTEXT",
                "log.dirs=" + dir,
                "num.partitions=1",
                // one node: the internal topics cannot have more replicas than that
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                "");
    }
}
