package dev.jitzoo.gateway.reports;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.records.ReportRecords;
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
import java.util.LinkedHashMap;
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
 * The event loops only queue a report; one thread of its own hands what queued to the producer,
 * all of it at once, so that {@code send}'s waits (the topic's metadata while the broker is
 * unreachable, a full producer buffer) never stall a connection. What queued of one session goes
 * in one record ({@link ReportRecords}: a page sends its reports together, one per op), serialized
 * on that thread, its device once; each report is acknowledged with its record. The producer
 * batches the records per partition on its way to the broker. With traces on, each record is a
 * {@code publish} span whose context travels in the record's headers to the zoo's consumer; with
 * traces off, no span is made (the disabled SDK would still record one a record, and put its
 * context in the headers).
 */
@Startup
@ApplicationScoped
public class ReportPublisher {

    private static final Logger LOG = Logger.getLogger(ReportPublisher.class);
    static final String REPORTS = "kernel-reports";
    static final String MICROBENCH = "microbench-results";

    /**
     * Reports and results waiting for the producer's thread, past the ones the producer holds: a
     * burst of sessions sending their reports at once waits here; past it a report is answered
     * UNAVAILABLE, and the client sends it again after a backoff. About 20 MB at most.
     */
    static final int BUFFERED = 65_536;

    /** The records of one event-loop tick and the broker's round trip go in one request. */
    private static final int LINGER_MS = 2;

    /** The most reports in one record: a session's handful, however many queued (a record stays far below the broker's 1 MB). */
    static final int REPORTS_PER_RECORD = 64;

    /** A report waiting for its session's record (then {@code record} is null), or a record of its own. */
    private record Outgoing(KernelReport report, DeviceProfile device, ProducerRecord<String, byte[]> record,
                            CompletableFuture<Void> acked) {
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

    /**
     * Completes when the broker has acknowledged the record that carries the report (its device
     * left unset: {@code device} is its session's); fails when it cannot be published.
     */
    public CompletionStage<Void> publish(KernelReport report, DeviceProfile device) {
        return queue(new Outgoing(report, device, null, new CompletableFuture<>()));
    }

    /** Completes when the broker has acknowledged the record; fails when it cannot be published. */
    public CompletionStage<Void> publish(MicrobenchReport result) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(MICROBENCH, result.getDevice().getFingerprint(), result.toByteArray());
        return queue(new Outgoing(null, null, record, new CompletableFuture<>()));
    }

    private CompletionStage<Void> queue(Outgoing o) {
        inFlight.incrementAndGet();
        o.acked().whenComplete((ok, failure) -> inFlight.decrementAndGet());
        if (stopping || !queued.offer(o)) {
            o.acked().completeExceptionally(new IllegalStateException(stopping ? "the gateway is shutting down"
                    : BUFFERED + " reports already wait for the broker"));
        }
        return o.acked();
    }

    /** The sender thread: hands everything queued to the producer, a session's reports in one record. */
    private void sendQueued() {
        List<Outgoing> drained = new ArrayList<>();
        Map<String, List<Outgoing>> bySession = new LinkedHashMap<>();
        while (!stopping) {
            try {
                Outgoing first = queued.poll(1, TimeUnit.SECONDS);
                if (first == null) {
                    continue;
                }
                drained.add(first);
                queued.drainTo(drained);
                for (Outgoing o : drained) {
                    if (o.record() != null) {
                        hand(o.record(), List.of(o));
                    } else {
                        List<Outgoing> session = bySession.computeIfAbsent(o.report().getSessionId(), id -> new ArrayList<>());
                        session.add(o);
                        if (session.size() == REPORTS_PER_RECORD) {
                            handReports(bySession.remove(o.report().getSessionId()));
                        }
                    }
                }
                bySession.values().forEach(this::handReports);
            } catch (InterruptedException e) { // stopping: what is still queued is refused by stop()
                Thread.currentThread().interrupt();
                return;
            } finally {
                drained.clear();
                bySession.clear();
            }
        }
    }

    /** One record for reports of one session. */
    private void handReports(List<Outgoing> reports) {
        Outgoing first = reports.get(0);
        List<KernelReport> carried = new ArrayList<>(reports.size());
        reports.forEach(o -> carried.add(o.report()));
        byte[] value = ReportRecords.encode(first.device(), carried);
        hand(new ProducerRecord<>(REPORTS, first.device().getFingerprint(), value), reports);
    }

    /** Sends one record; each of {@code carried} completes on the broker's answer to it. */
    private void hand(ProducerRecord<String, byte[]> record, List<Outgoing> carried) {
        Span span = tracer == null ? null : publishSpan(record);
        try {
            producer.send(record, (metadata, failure) -> {
                end(span, failure);
                for (Outgoing o : carried) {
                    if (failure == null) {
                        o.acked().complete(null);
                    } else {
                        o.acked().completeExceptionally(failure);
                    }
                }
            });
        } catch (RuntimeException e) { // metadata not had within max.block.ms, a closed producer, a record too large
            LOG.debugf("record not sent to %s: %s", record.topic(), e);
            end(span, e);
            carried.forEach(o -> o.acked().completeExceptionally(e));
        }
    }

    /** The record's publish span, its context put in the record's headers for the zoo's consumer. */
    private Span publishSpan(ProducerRecord<String, byte[]> record) {
        Span span = tracer.spanBuilder(record.topic() + " publish").setSpanKind(SpanKind.PRODUCER)
                .setAttribute("messaging.system", "kafka").setAttribute("messaging.destination.name", record.topic()).startSpan();
        if (span.getSpanContext().isValid()) {
            telemetry.getPropagators().getTextMapPropagator().inject(Context.current().with(span), record,
                    (r, header, value) -> r.headers().add(header, value.getBytes(StandardCharsets.UTF_8)));
        }
        return span;
    }

    private static void end(Span span, Throwable failure) {
        if (span != null) {
            if (failure != null) {
                span.setStatus(StatusCode.ERROR, failure.toString());
            }
            span.end();
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
