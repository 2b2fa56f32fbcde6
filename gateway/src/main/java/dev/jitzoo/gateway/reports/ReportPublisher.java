package dev.jitzoo.gateway.reports;

import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import io.smallrye.reactive.messaging.MutinyEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

/**
 * Publishes validated reports to the `kernel-reports` topic and microbenchmark results to
 * `microbench-results`, keyed by device fingerprint.
 */
@ApplicationScoped
public class ReportPublisher {

    private final MutinyEmitter<byte[]> reports;
    private final MutinyEmitter<byte[]> microbench;
    /** Records sent and not yet acknowledged or failed. */
    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * Records waiting for the Kafka producer, past the ones it has in flight: a burst of sessions
     * sending their reports at once waits here; past it a report is answered UNAVAILABLE, and the
     * client sends it again after a backoff. About 20 MB at most.
     */
    static final int BUFFERED = 65_536;

    public ReportPublisher(@Channel("reports") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = BUFFERED)
                           MutinyEmitter<byte[]> reports,
                           @Channel("microbench") @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 1024)
                           MutinyEmitter<byte[]> microbench) {
        this.reports = reports;
        this.microbench = microbench;
    }

    /** Completes when the broker has acknowledged the record. */
    public Uni<Void> publish(KernelReport report) {
        return send(reports, report.toByteArray(), report.getDevice().getFingerprint());
    }

    /** Completes when the broker has acknowledged the record. */
    public Uni<Void> publish(MicrobenchReport result) {
        return send(microbench, result.toByteArray(), result.getDevice().getFingerprint());
    }

    private Uni<Void> send(MutinyEmitter<byte[]> channel, byte[] payload, String fingerprint) {
        return Uni.createFrom().deferred(() -> {
            inFlight.incrementAndGet();
            return channel.sendMessage(Message.of(payload).addMetadata(
                    OutgoingKafkaRecordMetadata.<String>builder().withKey(fingerprint).build()));
        }).onTermination().invoke(inFlight::decrementAndGet);
    }

    /**
     * Waits until no record is on its way to the broker, or {@code within} passed; returns how many
     * still are. For a drain: what the clients sent before it is acknowledged or refused, not lost.
     */
    public int awaitInFlight(Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return inFlight.get();
    }
}
