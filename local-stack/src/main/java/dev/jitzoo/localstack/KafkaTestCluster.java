package dev.jitzoo.localstack;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/** A one-node KRaft Kafka (combined broker and controller) inside this JVM, for tests. */
public final class KafkaTestCluster implements AutoCloseable {

    private final KafkaClusterTestKit cluster;

    private KafkaTestCluster(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    public static KafkaTestCluster start() throws Exception {
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

    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
