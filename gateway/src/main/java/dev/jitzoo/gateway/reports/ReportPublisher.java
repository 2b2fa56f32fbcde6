package dev.jitzoo.gateway.reports;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.proto.zoo.v1.KernelReport;
import dev.jitzoo.proto.zoo.v1.MicrobenchReport;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Publishes validated reports to the {@code kernel-reports} topic and microbenchmark results to
 * {@code microbench-results}, keyed by device fingerprint, with Kafka's own producer
 * ({@code acks=all}, idempotent): a record is acknowledged only once every in-sync replica has it.
 * <p>
 * The event loops only queue a record; one thread of its own hands what queued to the producer,
 * all of it at once, so that {@code send}'s waits (the topic's metadata while the broker is
 * unreachable, a full producer buffer) never stall a connection. The producer batches the records
 * per partition on its way to the broker. With traces on, each record is a {@code publish} span
 * whose context travels in the record's headers to the zoo's consumer; with traces off, no span is
 * made (the disabled SDK would still record one a report, and put its context in the headers).
 */
@Startup
@ApplicationScoped
public class ReportPublisher {

    private static final Logger LOG = Logger.getLogger(ReportPublisher.class);
    static final String REPORTS = "kernel-reports";
    static final String MICROBENCH = "microbench-results";

    /**
     * Records waiting for the producer's thread, past the ones the producer holds: a burst of
     * sessions sending their reports at once waits here; past it a report is answered UNAVAILABLE,
     * and the client sends it again after a backoff. About 20 MB at most.
     */
    static final int BUFFERED = 65_536;

    /** The records of one event-loop tick and the broker's round trip go in one request. */
    private static final int LINGER_MS = 2;

    private record Outgoing(ProducerRecord<String, byte[]> record, CompletableFuture<Void> acked) {
    }

    private final Map<String, Object> producerConfig;
    /** Null while traces are off: the SDK then still records every span it is asked for, and drops it. */
    private final Tracer tracer;
    private final OpenTelemetry telemetry;
    private final BlockingQueue<Outgoing> queued = new ArrayBlockingQueue<>(BUFFERED);
    /** Records queued or sent and not yet acknowledged or failed. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile Producer<String, byte[]> producer;
    private volatile Thread sender;
    private volatile boolean stopping;

    public ReportPublisher(@ConfigProperty(name = "kafka.bootstrap.servers") String bootstrap, GatewayConfig config,
                           Tracer tracer, OpenTelemetry telemetry,
                           @ConfigProperty(name = "quarkus.otel.sdk.disabled", defaultValue = "false") boolean tracesOff) {
        this.tracer = tracesOff ? null : tracer;
        this.telemetry = telemetry;
        int timeoutMs = (int) Math.max(1_000, config.publishTimeout().toMillis());
        this.producerConfig = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.CLIENT_ID_CONFIG, "jitzoo-gateway-reports",
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, LINGER_MS,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeoutMs,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(30_000, timeoutMs - LINGER_MS),
                ProducerConfig.MAX_BLOCK_MS_CONFIG, timeoutMs,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    }

    @PostConstruct
    void start() {
        producer = new KafkaProducer<>(producerConfig);
        sender = new Thread(this::sendQueued, "jitzoo-report-sender");
        sender.setDaemon(true);
        sender.start();
    }

    /** After the shutdown's drain ({@code Drain}, a ShutdownEvent observer): what is left is refused. */
    @PreDestroy
    void stop() throws InterruptedException {
        stopping = true;
        if (sender != null) {
            sender.interrupt();
            sender.join(5_000);
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        Outgoing left;
        while ((left = queued.poll()) != null) {
            left.acked().completeExceptionally(new IllegalStateException("the gateway is shutting down"));
        }
    }

    /** Completes when the broker has acknowledged the record; fails when it cannot be published. */
    public CompletionStage<Void> publish(KernelReport report) {
        return send(REPORTS, report.getDevice().getFingerprint(), report.toByteArray());
    }

    /** Completes when the broker has acknowledged the record; fails when it cannot be published. */
    public CompletionStage<Void> publish(MicrobenchReport result) {
        return send(MICROBENCH, result.getDevice().getFingerprint(), result.toByteArray());
    }

    private CompletionStage<Void> send(String topic, String fingerprint, byte[] payload) {
        CompletableFuture<Void> acked = new CompletableFuture<>();
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, fingerprint, payload);
        inFlight.incrementAndGet();
        Span span = tracer == null ? null : publishSpan(topic, record);
        acked.whenComplete((ok, failure) -> {
            inFlight.decrementAndGet();
            if (span != null) {
                if (failure != null) {
                    span.setStatus(StatusCode.ERROR, failure.toString());
                }
                span.end();
            }
        });
        if (stopping || !queued.offer(new Outgoing(record, acked))) {
            acked.completeExceptionally(new IllegalStateException(stopping ? "the gateway is shutting down"
                    : BUFFERED + " records already wait for the broker"));
        }
        return acked;
    }

    /** The record's publish span, its context put in the record's headers for the zoo's consumer. */
    private Span publishSpan(String topic, ProducerRecord<String, byte[]> record) {
        Span span = tracer.spanBuilder(topic + " publish").setSpanKind(SpanKind.PRODUCER)
                .setAttribute("messaging.system", "kafka").setAttribute("messaging.destination.name", topic).startSpan();
        if (span.getSpanContext().isValid()) {
            telemetry.getPropagators().getTextMapPropagator().inject(Context.current().with(span), record,
                    (r, header, value) -> r.headers().add(header, value.getBytes(StandardCharsets.UTF_8)));
        }
        return span;
    }

    /** The sender thread: hands every record queued to the producer, each completing on the broker's answer. */
    private void sendQueued() {
        List<Outgoing> batch = new ArrayList<>();
        while (!stopping) {
            try {
                Outgoing first = queued.poll(1, TimeUnit.SECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queued.drainTo(batch);
                for (Outgoing o : batch) {
                    hand(o);
                }
            } catch (InterruptedException e) { // stopping: what is still queued is refused by stop()
                Thread.currentThread().interrupt();
                return;
            } finally {
                batch.clear();
            }
        }
    }

    private void hand(Outgoing o) {
        try {
            producer.send(o.record(), (metadata, failure) -> {
                if (failure == null) {
                    o.acked().complete(null);
                } else {
                    o.acked().completeExceptionally(failure);
                }
            });
        } catch (RuntimeException e) { // metadata not had within max.block.ms, a closed producer, a record too large
            LOG.debugf("record not sent to %s: %s", o.record().topic(), e);
            o.acked().completeExceptionally(e);
        }
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
