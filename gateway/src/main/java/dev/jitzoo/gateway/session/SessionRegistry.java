package dev.jitzoo.gateway.session;

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
 * kernel generation running for it, and how many PlanRequests it sent. A session is only read or
 * changed through {@link #read} and {@link #update}, which hold its lock: frames of one connection
 * and the generation stream feeding it run on different threads.
 */
@ApplicationScoped
public class SessionRegistry {

    private static final class Connection {
        Session session;
        Cancellable generation;
        int planRequests;
    }

    private final Map<String, Connection> connections = new ConcurrentHashMap<>();

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
        Cancellable running;
        synchronized (connection) {
            running = connection.generation;
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
