package dev.jitzoo.proto.serving;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * gRPC's max connection age (gRFC A9) for the services that serve gRPC on Quarkus's HTTP server,
 * which has no such setting of its own: a client's HTTP/2 connection older than
 * {@code jitzoo.grpc.max-connection-age} (30 s, each connection's age drawn 10% either side so
 * that a fleet's clients do not reconnect together; zero: never) is sent GOAWAY on its next call.
 * That call and those already on the connection complete, within
 * {@code jitzoo.grpc.max-connection-age-grace} (30 s: longer than any of their calls, a 4,096-row
 * plan included). The client's channel then connects anew and asks DNS again: behind a headless
 * Service it finds the pods a scale-out added, so their share of calls reaches them without
 * restarting the callers. A connection that sends no call is not told (it carries nothing).
 */
@ApplicationScoped
public class GrpcConnectionAge {

    private static final Logger LOG = Logger.getLogger(GrpcConnectionAge.class);
    /** Runs before Quarkus's own filters and the routes, the gRPC one among them. */
    private static final int PRIORITY = 1_000;
    private static final long RETIRED = Long.MIN_VALUE;
    private static final long NO_ERROR = 0;
    /** Time enough for the first GOAWAY to reach the client, and the streams it sent before to reach us. */
    private static final Duration GOAWAY_IN_FLIGHT = Duration.ofSeconds(1);

    private final long maxAgeNanos;
    private final Duration grace;
    /** When each connection seen is due to be retired (RETIRED once it was); forgotten with the connection. */
    private final Map<HttpConnection, Long> due = Collections.synchronizedMap(new WeakHashMap<>());

    public GrpcConnectionAge(@ConfigProperty(name = "jitzoo.grpc.max-connection-age", defaultValue = "PT30S") Duration maxAge,
                             @ConfigProperty(name = "jitzoo.grpc.max-connection-age-grace", defaultValue = "PT30S") Duration grace) {
        this.maxAgeNanos = maxAge.toNanos();
        this.grace = grace;
    }

    void register(@Observes Filters filters) {
        if (maxAgeNanos > 0) {
            filters.register(this::filter, PRIORITY);
        }
    }

    private void filter(RoutingContext context) {
        HttpServerRequest request = context.request();
        if (request.version() == HttpVersion.HTTP_2 && isGrpc(request)) {
            retireIfDue(context.vertx(), request.connection(), System.nanoTime());
        }
        context.next();
    }

    private void retireIfDue(Vertx vertx, HttpConnection connection, long now) {
        long at = due.computeIfAbsent(connection, c -> now + jittered());
        if (at == RETIRED || now - at < 0 || !due.replace(connection, at, RETIRED)) {
            return;
        }
        LOG.debugf("gRPC connection from %s reached its max age: GOAWAY", connection.remoteAddress());
        // two GOAWAYs, as gRPC's own servers retire a connection: the first promises every stream the
        // client may already have sent (the largest id), so none on the wire is refused; once it has
        // surely arrived, the second names the last stream seen, and the connection closes when the
        // calls on it have completed (or the grace is over)
        connection.goAway(NO_ERROR, Integer.MAX_VALUE);
        vertx.setTimer(GOAWAY_IN_FLIGHT.toMillis(), id -> connection.shutdown(grace.toMillis(), TimeUnit.MILLISECONDS));
    }

    private long jittered() {
        return (long) (maxAgeNanos * ThreadLocalRandom.current().nextDouble(0.9, 1.1));
    }

    private static boolean isGrpc(HttpServerRequest request) {
        String type = request.getHeader("content-type");
        return type != null && type.startsWith("application/grpc");
    }
}
