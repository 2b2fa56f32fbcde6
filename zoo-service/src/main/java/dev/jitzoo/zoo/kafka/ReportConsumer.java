package dev.jitzoo.zoo.kafka;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.InvalidReportException;
import dev.jitzoo.zoo.domain.Zoo;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Consumes the gateway's validated reports from Kafka. A record that cannot be parsed or is
 * refused fails, and the channel's failure strategy moves it to the dead-letter topic, so one bad
 * record never stops the stream; one that MongoDB cannot store for now waits until it can
 * ({@link UntilStored}). Counts what it ingests and refuses (by reason), the elections whose
 * kernel changed, and the lag from the gateway's acceptance to the election.
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
    public void consume(byte[] payload) throws InvalidProtocolBufferException {
        KernelReport report;
        try {
            report = KernelReport.parseFrom(payload);
        } catch (InvalidProtocolBufferException e) {
            refused("unparsable");
            throw e;
        }
        try {
            Zoo.Ingested done = UntilStored.call("report of session " + report.getSessionId(), () -> zoo.ingest(report));
            BestKernel best = done.best();
            ingested.increment();
            if (done.changed()) {
                changed.increment();
            }
            if (report.getReceivedAtMs() > 0) {
                lag.record(Duration.ofMillis(Math.max(0, System.currentTimeMillis() - report.getReceivedAtMs())));
            }
            LOG.infof("report of session %s stored; best for %s is %s (%.3f ms, ranked by %d sessions from %d origins)",
                    report.getSessionId(), report.getOp().getKind(), best.kernel().getKernelId(),
                    best.medianMs(), best.reports(), best.origins());
        } catch (InvalidReportException e) {
            refused(e.kind());
            LOG.warnf("refused report of session %s: %s", report.getSessionId(), e.getMessage());
            throw e;
        }
    }

    private void refused(String reason) {
        metrics.counter("jitzoo.zoo.reports.refused", "reason", reason).increment();
    }
}
