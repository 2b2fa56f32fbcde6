package dev.jitzoo.zoo.kafka;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.InvalidReportException;
import dev.jitzoo.zoo.domain.Zoo;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Consumes the gateway's validated reports from Kafka. A record that cannot be parsed or is
 * refused fails, and the channel's failure strategy moves it to the dead-letter topic, so one bad
 * record never stops the stream; one that MongoDB cannot store for now waits until it can
 * ({@link UntilStored}).
 */
@ApplicationScoped
public class ReportConsumer {

    private static final Logger LOG = Logger.getLogger(ReportConsumer.class);

    private final Zoo zoo;

    public ReportConsumer(Zoo zoo) {
        this.zoo = zoo;
    }

    @Incoming("reports")
    @Blocking
    public void consume(byte[] payload) throws InvalidProtocolBufferException {
        KernelReport report = KernelReport.parseFrom(payload);
        try {
            BestKernel best = UntilStored.call("report of session " + report.getSessionId(), () -> zoo.ingest(report));
            LOG.infof("report of session %s stored; best for %s is %s (%.3f ms, ranked by %d sessions from %d origins)",
                    report.getSessionId(), report.getOp().getKind(), best.kernel().getKernelId(),
                    best.medianMs(), best.reports(), best.origins());
        } catch (InvalidReportException e) {
            LOG.warnf("refused report of session %s: %s", report.getSessionId(), e.getMessage());
            throw e;
        }
    }
}
