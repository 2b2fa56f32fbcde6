package dev.jitzoo.gateway.session;

import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.gateway.tenant.QuotaMeter;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

/**
 * Closes the connections the gateway should not hold on to: those whose client sent no frame for
 * {@code idle-timeout}, and those that answered none of the heartbeat's last three pings (a peer
 * gone without a close). Each gets an {@code IDLE} Error frame and close code 1001; its session
 * can be resumed. It pings every connection each {@code heartbeat}, and forgets the quota buckets
 * left full for a minute (one per address seen).
 */
@ApplicationScoped
public class ConnectionSweeper {

    private static final Logger LOG = Logger.getLogger(ConnectionSweeper.class);
    /** Pings a connection may leave unanswered before it counts as gone. */
    static final int MISSED_PINGS = 3;

    private final SessionRegistry registry;
    private final OpenConnections open;
    private final GatewayConfig config;
    private final GatewayMetrics metrics;
    private final RefusalLog closes = new RefusalLog(LOG);

    private final QuotaMeter quotas;

    public ConnectionSweeper(SessionRegistry registry, OpenConnections open, GatewayConfig config, GatewayMetrics metrics, QuotaMeter quotas) {
        this.metrics = metrics;
        this.quotas = quotas;
        this.registry = registry;
        this.open = open;
        this.config = config;
    }

    void start(@Observes StartupEvent started, Vertx vertx) {
        long every = Math.max(250, Math.min(5_000, Math.min(config.idleTimeout().toMillis(), config.heartbeat().toMillis()) / 4));
        vertx.setPeriodic(every, id -> sweep());
        vertx.setPeriodic(config.heartbeat().toMillis(), id -> open.all().forEach(ClientConnection::ping));
    }

    void sweep() {
        long silent = MISSED_PINGS * config.heartbeat().toMillis();
        registry.stale(System.currentTimeMillis(), config.idleTimeout().toMillis(), silent).forEach((id, why) ->
                open.find(id).ifPresentOrElse(connection -> {
                    closes.info(id, why, System.currentTimeMillis());
                    metrics.refused(why.code());
                    SessionSocket.refuse(why, connection).subscribe().with(v -> { }, e -> registry.close(id));
                }, () -> registry.close(id)));
        quotas.forgetIdle(System.currentTimeMillis());
    }
}
