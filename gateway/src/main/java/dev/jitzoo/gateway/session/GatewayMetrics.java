package dev.jitzoo.gateway.session;

import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * What an operator watches on a gateway (Prometheus at /q/metrics): connections and sessions
 * held, frames received by type, refusals by error code (frames, connections, idle closes), offers
 * sent and offer streams cut short, reports and microbenchmarks published, and the latency of the
 * Welcome and of publishing to Kafka.
 */
@ApplicationScoped
public class GatewayMetrics {

    private final Map<ClientFrame.FrameCase, Counter> frames = new EnumMap<>(ClientFrame.FrameCase.class);
    private final Map<ErrorCode, Counter> refused = new EnumMap<>(ErrorCode.class);
    private final Counter offersSent;
    private final Counter cutShort;
    private final Counter published;
    private final Timer welcome;
    private final Timer publish;
    private final Timer offer;

    public GatewayMetrics(MeterRegistry metrics, SessionRegistry registry) {
        Gauge.builder("jitzoo.gateway.connections", registry, SessionRegistry::connections)
                .description("open WebSocket connections, before a Hello included").register(metrics);
        Gauge.builder("jitzoo.gateway.sessions", registry, SessionRegistry::sessions)
                .description("connections with a session (after Hello or Resume)").register(metrics);
        Gauge.builder("jitzoo.gateway.offers.queued", registry, SessionRegistry::queuedOffers)
                .description("offers generated and waiting for their client's credit").register(metrics);
        for (ClientFrame.FrameCase type : ClientFrame.FrameCase.values()) {
            frames.put(type, Counter.builder("jitzoo.gateway.frames").tag("type", type.name().toLowerCase(Locale.ROOT))
                    .description("client frames received").register(metrics));
        }
        for (ErrorCode code : ErrorCode.values()) {
            if (code != ErrorCode.UNRECOGNIZED) {
                refused.put(code, Counter.builder("jitzoo.gateway.refused")
                        .tag("code", code.name().substring("ERROR_CODE_".length()).toLowerCase(Locale.ROOT))
                        .description("frames and connections refused, by the Error frame's code").register(metrics));
            }
        }
        offersSent = Counter.builder("jitzoo.gateway.offers.sent").description("kernel offers sent").register(metrics);
        cutShort = Counter.builder("jitzoo.gateway.offers.cut.short")
                .description("sessions whose offers ended early: generation failed or stalled").register(metrics);
        published = Counter.builder("jitzoo.gateway.published").description("reports and microbenchmarks the broker took")
                .register(metrics);
        welcome = latency("jitzoo.gateway.welcome", "from Hello to the Welcome sent", metrics);
        publish = latency("jitzoo.gateway.publish", "from a report to the broker's acknowledgement", metrics);
        offer = latency("jitzoo.gateway.offer", "from codegen's kernel to its offer frame written, "
                + "waiting for the client's credit included", metrics);
    }

    /**
     * A latency: its p50 and p99 over the last two minutes as this gateway saw them, and buckets
     * (1 ms to 1 min) that sum across replicas and over any window ({@code histogram_quantile}).
     */
    private static Timer latency(String name, String description, MeterRegistry metrics) {
        return Timer.builder(name).description(description).publishPercentiles(0.5, 0.99)
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(1))
                .register(metrics);
    }

    void frame(ClientFrame.FrameCase type) {
        frames.get(type).increment();
    }

    void refused(ErrorCode code) {
        Counter counter = refused.get(code);
        if (counter != null) {
            counter.increment();
        }
    }

    void offersSent(int count) {
        offersSent.increment(count);
    }

    void cutShort() {
        cutShort.increment();
    }

    void published(Duration took) {
        published.increment();
        publish.record(took);
    }

    void offerWritten(Duration sinceGenerated) {
        offer.record(sinceGenerated);
    }

    void welcomed(Duration took) {
        welcome.record(took);
    }
}
