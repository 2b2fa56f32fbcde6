package dev.jitzoo.gateway;

import dev.jitzoo.proto.gateway.v1.ClientFrame;
import dev.jitzoo.proto.gateway.v1.ServerFrame;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A client of the gateway's WebSocket for tests: sends ClientFrames, hands ServerFrames over as they come, tells the close. */
final class TestSocket implements AutoCloseable {

    /** How the connection closed. */
    record Close(int code, String reason) {
    }

    private final BlockingQueue<ServerFrame> frames = new LinkedBlockingQueue<>();
    private final CompletableFuture<Close> closed = new CompletableFuture<>();
    private final WebSocket ws;
    private final java.util.concurrent.atomic.AtomicInteger pings = new java.util.concurrent.atomic.AtomicInteger();

    TestSocket(URL endpoint) throws Exception {
        this(endpoint, java.util.Map.of());
    }

    /** A connection that says it is forwarded for {@code address} (for a gateway that trusts X-Forwarded-For). */
    TestSocket(URL endpoint, String address) throws Exception {
        this(endpoint, address == null ? java.util.Map.of() : java.util.Map.of("X-Forwarded-For", address));
    }

    /** A connection with these headers on its upgrade request (an Origin, as a browser sends it). */
    TestSocket(URL endpoint, java.util.Map<String, String> headers) throws Exception {
        WebSocket.Listener listener = new WebSocket.Listener() {
            private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

            @Override
            public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
                byte[] bytes = new byte[data.remaining()];
                data.get(bytes);
                buffer.writeBytes(bytes);
                if (last) {
                    try {
                        frames.add(ServerFrame.parseFrom(buffer.toByteArray()));
                    } catch (Exception e) {
                        closed.completeExceptionally(e);
                    }
                    buffer.reset();
                }
                ws.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onPing(WebSocket ws, ByteBuffer message) {
                pings.incrementAndGet(); // the client answers with a pong on its own
                ws.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
                closed.complete(new Close(statusCode, reason));
                return null;
            }

            @Override
            public void onError(WebSocket ws, Throwable failure) {
                closed.completeExceptionally(failure);
            }
        };
        URI uri = URI.create(endpoint.toString().replace("http://", "ws://"));
        WebSocket.Builder builder = HttpClient.newHttpClient().newWebSocketBuilder();
        headers.forEach(builder::header);
        ws = builder.buildAsync(uri, listener).get(10, TimeUnit.SECONDS);
    }

    void send(ClientFrame.Builder frame) throws Exception {
        send(ByteBuffer.wrap(frame.build().toByteArray()));
    }

    /** Sends any bytes as one binary message, garbage included. */
    void send(ByteBuffer bytes) throws Exception {
        ws.sendBinary(bytes, true).get(10, TimeUnit.SECONDS);
    }

    void sendText(String text) throws Exception {
        ws.sendText(text, true).get(10, TimeUnit.SECONDS);
    }

    /** Every frame received and not taken yet. */
    List<ServerFrame> drain() {
        List<ServerFrame> all = new java.util.ArrayList<>();
        frames.drainTo(all);
        return all;
    }

    /** The next frame the gateway sends, within {@code timeout}; null when none came. */
    ServerFrame next(Duration timeout) throws InterruptedException {
        return frames.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The next frame that {@code wanted} accepts, within 10 s, skipping others; fails when none comes. */
    ServerFrame await(Predicate<ServerFrame> wanted, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ServerFrame frame; (frame = next(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))) != null; ) {
            if (wanted.test(frame)) {
                return frame;
            }
        }
        throw new AssertionError("no " + what + " within 10 s");
    }

    /** Pings the gateway sent so far. */
    int pings() {
        return pings.get();
    }

    boolean isOpen() {
        return !closed.isDone();
    }

    Close closed() throws Exception {
        return closed.get(15, TimeUnit.SECONDS);
    }

    /**
     * The value of one series of the gateway's Prometheus metrics (its name and labels as printed,
     * e.g. {@code jitzoo_gateway_refused_total{code="idle"}}), NaN when absent.
     */
    static double metric(URL endpoint, String series) throws Exception {
        return metric(metrics(endpoint), series);
    }

    /** The gateway's Prometheus page as scraped now, its status line first when it is not 200. */
    static String metrics(URL endpoint) throws Exception {
        java.net.http.HttpResponse<String> page = HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                endpoint.toURI().resolve("/q/metrics")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        return page.statusCode() == 200 ? page.body() : "HTTP " + page.statusCode() + "\n" + page.body();
    }

    /** The value of one series on a scraped page ({@link #metrics}), NaN when absent. */
    static double metric(String page, String series) {
        return page.lines().filter(l -> l.startsWith(series + " ")).findFirst()
                .map(l -> Double.parseDouble(l.substring(series.length() + 1).trim())).orElse(Double.NaN);
    }

    @Override
    public void close() {
        ws.sendClose(WebSocket.NORMAL_CLOSURE, "done");
    }
}
