package dev.jitzoo.localstack;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.utils.Exit;

/**
 * A one-node KRaft Kafka (combined broker and controller) inside this JVM, for tests.
 * <p>
 * Kafka's own exit and halt are turned into a line on stderr: at the JVM's exit, the test kit's
 * shutdown hook deletes the cluster's directories while the broker may still be closing, the
 * broker finds its log directory gone and halts the JVM with status 1, and the build reports a
 * test JVM that failed although every test passed.
 */
public final class KafkaTestCluster implements AutoCloseable {

    private final KafkaClusterTestKit cluster;

    private KafkaTestCluster(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    public static KafkaTestCluster start() throws Exception {
        Exit.setExitProcedure((status, message) -> stayUp("exit", status, message));
        Exit.setHaltProcedure((status, message) -> stayUp("halt", status, message));
        KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                .setCombined(true)
                .setNumBrokerNodes(1)
                .setNumControllerNodes(1)
                .build())
                // with the default of 3, consumer groups never get an offsets topic and receive nothing
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("group.initial.rebalance.delay.ms", "0")
                .build();
        cluster.format();
        cluster.startup();
        cluster.waitForReadyBrokers();
        return new KafkaTestCluster(cluster);
    }

    private static void stayUp(String what, int status, String message) {
        System.err.printf("in-JVM Kafka asked to %s with status %d (%s); the test JVM goes on%n", what, status, message);
    }

    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
