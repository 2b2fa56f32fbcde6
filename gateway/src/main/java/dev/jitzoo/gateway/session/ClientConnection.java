package dev.jitzoo.gateway.session;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ServerWebSocket;

/**
 * One client's WebSocket on Vert.x's own server: what its handshake carried, frames out (from any
 * thread: Vert.x queues a write from off the connection's event loop and flushes once for those
 * queued together), and its close.
 */
public final class ClientConnection {

    private final String id;
    private final ServerWebSocket socket;

    ClientConnection(String id, ServerWebSocket socket) {
        this.id = id;
        this.socket = socket;
    }

    /** This gateway's id for the connection (the {@link SessionRegistry}'s key). */
    public String id() {
        return id;
    }

    /** A handshake header's value; null when it had none. */
    public String header(String name) {
        return socket.headers().get(name);
    }

    /** The handshake URL's query; null when it had none. */
    public String query() {
        return socket.query();
    }

    /** The socket's peer, {@code host:port}. */
    public String peer() {
        return String.valueOf(socket.remoteAddress());
    }

    /** Writes one binary frame; the future says when it is written (a closed connection fails it). */
    public Future<Void> write(byte[] frame) {
        return socket.writeBinaryMessage(Buffer.buffer(frame));
    }

    /** {@link #write} as a Uni, for the answers that chain on theirs. */
    public Uni<Void> send(byte[] frame) {
        return Uni.createFrom().completionStage(() -> write(frame).toCompletionStage());
    }

    /** A heartbeat ping (browsers answer on their own). */
    void ping() {
        if (!socket.isClosed()) {
            socket.writePing(Buffer.buffer());
        }
    }

    /** Closes with a close frame of {@code code} and {@code reason} (at most 123 bytes of UTF-8). */
    public Uni<Void> close(int code, String reason) {
        return Uni.createFrom().completionStage(() -> socket.close((short) code, reason).toCompletionStage());
    }

    ServerWebSocket socket() {
        return socket;
    }
}
