package dev.jitzoo.gateway.session;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.gateway.reports.ReportPublisher;
import dev.jitzoo.proto.gateway.v1.Goaway;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The gateway's graceful shutdown (SIGTERM, a rolling update): new connections are refused, every
 * client is told to go (a {@code Goaway} frame), the reports in flight reach the broker (at most
 * {@code drain-timeout}), then each connection closes with 1001. Clients reconnect and resume
 * their sessions on another replica; a report whose acknowledgement they did not get they send
 * again, and the zoo stores it once.
 */
@ApplicationScoped
public class Drain {

    private static final Logger LOG = Logger.getLogger(Drain.class);
    private static final String REASON = "gateway shutting down: resume the session on another";

    private final OpenConnections open;
    private final ReportPublisher publisher;
    private final GatewayConfig config;
    private volatile boolean draining;

    public Drain(OpenConnections open, ReportPublisher publisher, GatewayConfig config) {
        this.open = open;
        this.publisher = publisher;
        this.config = config;
    }

    /**
     * Shutdown's first phase ({@code quarkus.shutdown.delay-enabled}): the server still serves, so
     * the Goaway and the closes reach the clients. By the {@link ShutdownEvent} the HTTP server has
     * closed the connections itself, with 1000, which clients take as the end of their session.
     */
    void onShutdownDelay(@Observes ShutdownDelayInitiatedEvent stopping) throws InterruptedException {
        drain();
    }

    /** A shutdown without its first phase (tests): drains what is left. */
    void onShutdown(@Observes ShutdownEvent stopping) throws InterruptedException {
        drain();
    }

    /** Whether the gateway is shutting down: no new connection is admitted. */
    public boolean draining() {
        return draining;
    }

    /** Tells every client to go, waits for the reports in flight, then closes every connection. */
    public synchronized void drain() throws InterruptedException {
        draining = true;
        List<ClientConnection> connections = open.all();
        if (connections.isEmpty()) {
            return;
        }
        LOG.infof("draining %d connections", connections.size());
        byte[] goaway = ServerFrame.newBuilder().setGoaway(Goaway.newBuilder().setReason(REASON)).build().toByteArray();
        for (ClientConnection connection : connections) {
            connection.write(goaway);
        }
        int left = publisher.awaitInFlight(config.drainTimeout());
        if (left > 0) {
            LOG.warnf("%d reports still on their way to the broker after %s: their clients will send them again", left,
                    config.drainTimeout());
        }
        List<Uni<Void>> closing = connections.stream()
                .map(c -> c.close(ProtocolException.GOING_AWAY, REASON).onFailure().recoverWithNull()).toList();
        Uni.join().all(closing).andFailFast().await().atMost(Duration.ofSeconds(5));
        LOG.infof("drained %d connections", connections.size());
    }
}
