package dev.jitzoo.gateway.session;

import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.HttpServerOptions;
import jakarta.inject.Singleton;

/**
 * The WebSocket transport's own cap on a frame and a message. Client frames are small (Hello,
 * Credit, Report): the gateway refuses one over {@code jitzoo.gateway.max-frame-bytes} with an
 * Error frame and close code 1009; past this cap the server closes the connection on its own.
 */
@Singleton
public class TransportLimits implements HttpServerOptionsCustomizer {

    /** 1 MiB: far above any frame the gateway accepts, so its own refusal is the one clients see. */
    static final int MAX_BYTES = 1 << 20;

    @Override
    public void customizeHttpServer(HttpServerOptions options) {
        limit(options);
    }

    @Override
    public void customizeHttpsServer(HttpServerOptions options) {
        limit(options);
    }

    private static void limit(HttpServerOptions options) {
        options.setMaxWebSocketFrameSize(MAX_BYTES).setMaxWebSocketMessageSize(MAX_BYTES);
    }
}
