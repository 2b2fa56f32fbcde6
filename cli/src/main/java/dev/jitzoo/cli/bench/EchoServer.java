package dev.jitzoo.cli.bench;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServerOptions;

/**
 * The baseline of {@code ./jitzoo bench gateway}: a bare Vert.x WebSocket server that sends every
 * binary message back, on two event loops like the gateway's, in a JVM of its own. Prints its
 * port on the first line; runs until killed.
 */
public final class EchoServer {

    private EchoServer() {
    }

    public static void main(String[] args) {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0).setMaxWebSocketFrameSize(1 << 20))
                .webSocketHandler(ws -> ws.binaryMessageHandler(ws::writeBinaryMessage))
                .listen()
                .onSuccess(server -> System.out.println(server.actualPort()))
                .onFailure(e -> {
                    System.err.println("echo server: " + e.getMessage());
                    System.exit(1);
                });
    }
}
