package dev.jitzoo.zoo.kafka;

import dev.jitzoo.zoo.domain.ElectionWindows;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.KafkaConsumerRebalanceListener;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Collection;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

/**
 * When the report partitions this replica consumes change, the election windows it holds may be
 * stale (another replica elected meanwhile): they are forgotten, and read again from MongoDB.
 */
@ApplicationScoped
@Identifier("zoo-reports-rebalance")
public class ReportsRebalance implements KafkaConsumerRebalanceListener {

    private static final Logger LOG = Logger.getLogger(ReportsRebalance.class);

    private final ElectionWindows windows;

    public ReportsRebalance(ElectionWindows windows) {
        this.windows = windows;
    }

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        forget("assigned", partitions);
    }

    @Override
    public void onPartitionsRevoked(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        forget("revoked", partitions);
    }

    private void forget(String what, Collection<TopicPartition> partitions) {
        if (!partitions.isEmpty()) {
            LOG.infof("report partitions %s %s: election windows read again", what, partitions);
            windows.clear();
        }
    }
}
