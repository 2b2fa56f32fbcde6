package dev.jitzoo.gateway.session;

import dev.jitzoo.tenant.Tenant;
import dev.jitzoo.proto.gateway.v1.Hello;
import io.smallrye.mutiny.subscription.Cancellable;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The gateway's open connections and what each holds: its {@link Session} (after Hello), the
 * kernel generation running for it, how many PlanRequests it sent, its network origin, and when
 * it was last heard from. Admits connections within the pod's cap and the per-address cap. A
 * session is only read or changed through {@link #read} and {@link #update}, which hold its lock:
 * frames of one connection and the generation stream feeding it run on different threads.
 */
@ApplicationScoped
public class SessionRegistry {

    private static final class Connection {
        Session session;
        Cancellable generation;
        int planRequests;
        String origin = "";
        /** Set once its API key is checked, before any frame is read. */
        Tenant tenant;
        /** When the client last sent a frame, and when it was last heard at all (a frame or a pong). */
        volatile long lastFrameMs;
        volatile long lastHeardMs;
        /** Frames the gateway is still answering (a Hello's Welcome, a Resume's Resumed): the client waits on the gateway, it is not idle. */
        int answering;
        /** Found stale once: being closed, not swept again. */
        volatile boolean closing;
    }

    private final Map<String, Connection> connections = new ConcurrentHashMap<>();
    private final Map<String, Integer> perOrigin = new ConcurrentHashMap<>();
    /** The connection each session is on, by session id. */
    private final Map<String, String> holders = new ConcurrentHashMap<>();

    /**
     * Admits a new connection from a hashed network origin, or says why not: the gateway holds
     * {@code maxConnections} already, or the origin holds {@code maxPerOrigin}. An admitted
     * connection is counted until {@link #close}.
     */
    public ProtocolException admit(String connectionId, String origin, int maxConnections, int maxPerOrigin, long nowMs) {
        if (connections.size() >= maxConnections) {
            return ProtocolException.overloaded(connections.size());
        }
        int[] count = new int[1];
        perOrigin.compute(origin, (o, n) -> count[0] = n == null ? 1 : n + 1);
        Connection connection = connections.computeIfAbsent(connectionId, id -> new Connection());
        connection.origin = origin;
        connection.lastFrameMs = nowMs;
        connection.lastHeardMs = nowMs;
        return count[0] > maxPerOrigin ? ProtocolException.tooManyConnections(maxPerOrigin) : null;
    }

    /** The hashed network origin the connection was admitted with ("" for one never admitted). */
    public String origin(String connectionId) {
        Connection connection = connections.get(connectionId);
        return connection == null ? "" : connection.origin;
    }

    /** The connection's API key named this tenant (or it gave none, where none is required). */
    public void authenticated(String connectionId, Tenant tenant) {
        Connection connection = connections.get(connectionId);
        if (connection != null) {
            connection.tenant = tenant;
        }
    }

    /** The tenant the connection was admitted for; a connection never authenticated has none, and no frame of it is served. */
    public Tenant tenant(String connectionId) {
        Connection connection = connections.get(connectionId);
        if (connection == null || connection.tenant == null) {
            throw ProtocolException.unauthorized("the connection's API key was not checked");
        }
        return connection.tenant;
    }

    /** The client sent something: a frame ({@code frame}), or a pong. */
    public void heard(String connectionId, boolean frame, long nowMs) {
        Connection connection = connections.get(connectionId);
        if (connection != null) {
            connection.lastHeardMs = nowMs;
            if (frame) {
                connection.lastFrameMs = nowMs;
            }
        }
    }

    /**
     * The gateway starts answering a frame the client waits on (a Hello, a Resume): until
     * {@link #answered}, the connection cannot be idle, however slow the answer.
     */
    public void answering(String connectionId) {
        Connection connection = connections.get(connectionId);
        if (connection != null) {
            synchronized (connection) {
                connection.answering++;
            }
        }
    }

    /** The gateway answered (or refused) such a frame: the client's idle time counts from now. */
    public void answered(String connectionId, long nowMs) {
        Connection connection = connections.get(connectionId);
        if (connection != null) {
            synchronized (connection) {
                connection.answering--;
                connection.lastFrameMs = Math.max(connection.lastFrameMs, nowMs);
            }
        }
    }

    /**
     * The connections to close now, with why: no frame for {@code idleMs}, or nothing at all (not
     * even a pong to the heartbeat's pings) for {@code silentMs}; one waiting on the gateway's
     * answer is not idle. Each is named once.
     */
    public Map<String, ProtocolException> stale(long nowMs, long idleMs, long silentMs) {
        Map<String, ProtocolException> stale = new java.util.HashMap<>();
        connections.forEach((id, c) -> {
            if (c.closing) {
                return;
            }
            if (nowMs - c.lastHeardMs > silentMs) {
                stale.put(id, ProtocolException.idle("no answer to pings for " + (nowMs - c.lastHeardMs) / 1000 + " s"));
            } else if (nowMs - c.lastFrameMs > idleMs && !waitsOnGateway(c)) {
                stale.put(id, ProtocolException.idle("no frame for " + (nowMs - c.lastFrameMs) / 1000 + " s: resume the session when active again"));
            }
            c.closing = stale.containsKey(id);
        });
        return stale;
    }

    private static boolean waitsOnGateway(Connection c) {
        synchronized (c) {
            return c.answering > 0;
        }
    }

    /** Open connections, those before a Hello included. */
    public int connections() {
        return connections.size();
    }

    /** Open connections with a session. */
    public int sessions() {
        int sessions = 0;
        for (Connection c : connections.values()) {
            synchronized (c) {
                sessions += c.session == null ? 0 : 1;
            }
        }
        return sessions;
    }

    /** Offers generated and waiting for their client's credit, over every session: what idle clients cost the heap. */
    public int queuedOffers() {
        int queued = 0;
        for (Connection c : connections.values()) {
            Session session;
            synchronized (c) {
                session = c.session;
            }
            if (session != null) {
                queued += read(session, Session::pendingOfferCount);
            }
        }
        return queued;
    }

    /** The connection's session, or null before its Hello. */
    public Session session(String connectionId) {
        Connection connection = connections.get(connectionId);
        if (connection == null) {
            return null;
        }
        synchronized (connection) {
            return connection.session;
        }
    }

    /** The connection holding the session of this id, if one does (a session is live on one connection at a time). */
    public String holder(String sessionId) {
        return holders.get(sessionId);
    }

    /** Opens the connection's session; a second Hello on one connection is a protocol error. */
    public Session open(String connectionId, Hello hello) {
        return adopt(connectionId, new Session(UUID.randomUUID().toString(), hello));
    }

    /** Makes a session (a new or a resumed one) the connection's; one already there is a protocol error. */
    public Session adopt(String connectionId, Session session) {
        Connection connection = connections.computeIfAbsent(connectionId, id -> new Connection());
        synchronized (connection) {
            if (connection.session != null) {
                throw ProtocolException.protocol("the connection has a session already (Hello or Resume sent twice)");
            }
            connection.session = session;
            holders.put(session.id(), connectionId);
            return session;
        }
    }

    /** Keeps the generation running for a connection, to cancel on close; cancels it at once if the connection is gone. */
    public void generating(String connectionId, Cancellable running) {
        Connection connection = connections.get(connectionId);
        if (connection == null) {
            running.cancel();
            return;
        }
        synchronized (connection) {
            connection.generation = running;
        }
    }

    /** Counts a PlanRequest of the connection and returns how many it sent, this one included. */
    public int countPlanRequest(String connectionId) {
        Connection connection = connections.computeIfAbsent(connectionId, id -> new Connection());
        synchronized (connection) {
            return ++connection.planRequests;
        }
    }

    /** Forgets a closed connection and stops the generation running for it. */
    public void close(String connectionId) {
        Connection connection = connections.remove(connectionId);
        if (connection == null) {
            return;
        }
        perOrigin.computeIfPresent(connection.origin, (o, n) -> n <= 1 ? null : n - 1);
        Cancellable running;
        synchronized (connection) {
            running = connection.generation;
            if (connection.session != null) {
                holders.remove(connection.session.id(), connectionId); // unless resumed elsewhere meanwhile
            }
        }
        if (running != null) {
            running.cancel();
        }
    }

    /** Changes a session under its lock. */
    public void update(Session session, Consumer<Session> change) {
        synchronized (session) {
            change.accept(session);
        }
    }

    /** Changes or reads a session under its lock, and returns what {@code change} returns. */
    public <T> T read(Session session, Function<Session, T> change) {
        synchronized (session) {
            return change.apply(session);
        }
    }
}
