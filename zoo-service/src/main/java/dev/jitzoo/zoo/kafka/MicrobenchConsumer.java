package dev.jitzoo.zoo.kafka;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import dev.jitzoo.zoo.domain.InvalidReportException;
import dev.jitzoo.zoo.domain.Zoo;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

/**
 * Consumes the gateway's validated microbenchmark results from Kafka; a record that cannot be
 * parsed or is refused goes to the dead-letter topic, as with reports.
 */
@ApplicationScoped
public class MicrobenchConsumer {

    private static final Logger LOG = Logger.getLogger(MicrobenchConsumer.class);

    private final Zoo zoo;

    public MicrobenchConsumer(Zoo zoo) {
        this.zoo = zoo;
    }

    @Incoming("microbench")
    @Blocking
    public void consume(byte[] payload) throws InvalidProtocolBufferException {
        MicrobenchReport report = MicrobenchReport.parseFrom(payload);
        try {
            UntilStored.call("microbenchmark of session " + report.getSessionId(), () -> {
                zoo.ingestMicrobench(report);
                return null;
            });
            LOG.infof("microbenchmark of session %s stored (%d primitives, device %s)", report.getSessionId(),
                    report.getSpeedupsCount(), report.getDevice().getFingerprint());
        } catch (InvalidReportException e) {
            LOG.warnf("refused microbenchmark of session %s: %s", report.getSessionId(), e.getMessage());
            throw e;
        }
    }
}
