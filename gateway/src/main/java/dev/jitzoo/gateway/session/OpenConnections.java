package dev.jitzoo.gateway.session;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** The gateway's open WebSockets, by connection id, from the upgrade to the close. */
@ApplicationScoped
public class OpenConnections {

    private final Map<String, ClientConnection> open = new ConcurrentHashMap<>();

    void opened(ClientConnection connection) {
        open.put(connection.id(), connection);
    }

    void closed(String id) {
        open.remove(id);
    }

    public Optional<ClientConnection> find(String id) {
        return Optional.ofNullable(open.get(id));
    }

    /** A copy: connections open and close meanwhile. */
    public List<ClientConnection> all() {
        return List.copyOf(open.values());
    }
}
