package dev.jitzoo.zoo.kafka;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.records.ReportRecords;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.zoo.domain.Zoo;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.reactive.messaging.kafka.KafkaRecord;
import io.smallrye.reactive.messaging.kafka.KafkaRecordBatch;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Consumes the gateway's validated reports from Kafka a poll's batch at a time: the zoo stores the
 * batch in one write and elects each key it touches once. A record carries one session's reports
 * or one report ({@link ReportRecords}). A record that cannot be parsed, or one of whose reports is
 * refused, is nacked on its own, and the channel's failure strategy moves it to the dead-letter
 * topic, so one bad record never stops the stream (its other reports are stored, and stored once
 * again when it is replayed); a batch MongoDB cannot store for now waits until it can
 * ({@link UntilStored}). Counts what it ingests and refuses (by reason), the
 * elections whose kernel changed, and the lag from the gateway's acceptance to the election.
 */
@ApplicationScoped
public class ReportConsumer {

    private static final Logger LOG = Logger.getLogger(ReportConsumer.class);

    private final Zoo zoo;
    private final MeterRegistry metrics;
    private final Counter ingested;
    private final Counter changed;
    private final Timer lag;

    public ReportConsumer(Zoo zoo, MeterRegistry metrics) {
        this.zoo = zoo;
        this.metrics = metrics;
        this.ingested = metrics.counter("jitzoo.zoo.reports.ingested");
        this.changed = metrics.counter("jitzoo.zoo.elections.changed");
        this.lag = Timer.builder("jitzoo.zoo.ingest.lag").description("from the gateway's acceptance of a report to its election")
                .publishPercentiles(0.5, 0.99).register(metrics);
    }

    @Incoming("reports")
    @Blocking
    public CompletionStage<Void> consume(KafkaRecordBatch<String, byte[]> batch) {
        List<KafkaRecord<String, byte[]>> carriers = new ArrayList<>(); // each report's record
        List<KernelReport> reports = new ArrayList<>();
        List<CompletableFuture<Void>> deadLettered = new ArrayList<>();
        for (KafkaRecord<String, byte[]> record : batch.getRecords()) {
            try {
                for (KernelReport report : ReportRecords.decode(record.getPayload())) {
                    reports.add(report);
                    carriers.add(record);
                }
            } catch (InvalidProtocolBufferException e) {
                refused("unparsable");
                LOG.warnf("refused an unparsable report (key %s, partition %d)", record.getKey(), record.getPartition());
                deadLettered.add(record.nack(e).toCompletableFuture());
            }
        }
        Zoo.Ingested done = UntilStored.call("a batch of " + reports.size() + " reports", () -> zoo.ingest(reports));
        Set<KafkaRecord<String, byte[]>> nacked = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Zoo.Refused r : done.refused()) {
            KernelReport report = reports.get(r.index());
            refused(r.reason().kind());
            LOG.warnf("refused report of session %s: %s", report.getSessionId(), r.reason().getMessage());
            if (nacked.add(carriers.get(r.index()))) { // a record once, with its first refused report's reason
                deadLettered.add(carriers.get(r.index()).nack(r.reason()).toCompletableFuture());
            }
        }
        long now = System.currentTimeMillis();
        int stored = reports.size() - done.refused().size();
        ingested.increment(stored);
        for (KernelReport report : reports) {
            if (report.getReceivedAtMs() > 0) {
                lag.record(Duration.ofMillis(Math.max(0, now - report.getReceivedAtMs())));
            }
        }
        for (Zoo.Elected e : done.elections()) {
            if (e.changed()) {
                changed.increment();
                LOG.infof("elected %s for %s (%.3f ms, ranked by %d sessions from %d origins)", e.best().kernel().getKernelId(),
                        e.key().asString(), e.best().medianMs(), e.best().reports(), e.best().origins());
            }
        }
        LOG.debugf("stored %d reports, %d keys elected", stored, done.elections().size());
        // the batch's offsets are committed once its refused records are in the dead-letter topic
        return CompletableFuture.allOf(deadLettered.toArray(CompletableFuture[]::new)).thenCompose(v -> batch.ack());
    }

    private void refused(String reason) {
        metrics.counter("jitzoo.zoo.reports.refused", "reason", reason).increment();
    }
}
