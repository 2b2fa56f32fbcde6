package dev.jitzoo.gateway.reports;

import dev.jitzoo.proto.zoo.v1.KernelReport;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;

/** Publishes validated reports to the `kernel-reports` topic, keyed by device fingerprint. */
@ApplicationScoped
public class ReportPublisher {

    private final MutinyEmitter<byte[]> reports;

    public ReportPublisher(@Channel("reports") MutinyEmitter<byte[]> reports) {
        this.reports = reports;
    }

    /** Completes when the broker has acknowledged the record. */
    public Uni<Void> publish(KernelReport report) {
        Message<byte[]> message = Message.of(report.toByteArray()).addMetadata(
                OutgoingKafkaRecordMetadata.<String>builder().withKey(report.getDevice().getFingerprint()).build());
        return reports.sendMessage(message);
    }
}
