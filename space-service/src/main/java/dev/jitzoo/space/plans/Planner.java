package dev.jitzoo.space.plans;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.protobuf.ByteString;
import dev.jitzoo.proto.space.v1.DynamicRequest;
import dev.jitzoo.proto.space.v1.DynamicResponse;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Where uKernel plans are composed: off the event loop, on a small pool of its own with a bounded
 * queue (a request past it is refused as {@code RESOURCE_EXHAUSTED}, not queued without end), and
 * each answer kept a while by what it depends on (op, device, range), so the same request, asked
 * again by every device of a kind, is composed once. A plan over thousands of rows takes seconds;
 * nothing a client asks for may hold the loop every Compose needs.
 */
public final class Planner implements AutoCloseable {

    /** How long a composed plan is kept (the fleet's primitives, which the space depends on, change slowly). */
    static final Duration KEPT = Duration.ofMinutes(10);

    private final ThreadPoolExecutor pool;
    private final Cache<Key, DynamicResponse> answers;

    /** What a plan depends on besides the space's primitive table. */
    private record Key(ByteString op, ByteString device, int lo, int hi) {
    }

    /** {@code threads} composing at once, {@code queued} more waiting, {@code kept} answers remembered. */
    public Planner(int threads, int queued, long kept) {
        AtomicInteger named = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(queued), r -> {
            Thread t = new Thread(r, "jitzoo-planner-" + named.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.answers = Caffeine.newBuilder().maximumSize(kept).expireAfterWrite(KEPT).build();
    }

    /** The plan of a request: remembered, or composed on the pool by {@code compose}. */
    public CompletableFuture<DynamicResponse> plan(DynamicRequest request, Supplier<DynamicResponse> compose) {
        Key key = new Key(request.getOp().toByteString(), request.getDevice().toByteString(), request.getLo(), request.getHi());
        DynamicResponse known = answers.getIfPresent(key);
        if (known != null) {
            return CompletableFuture.completedFuture(known);
        }
        try {
            return CompletableFuture.supplyAsync(() -> {
                DynamicResponse composed = compose.get();
                answers.put(key, composed);
                return composed;
            }, pool);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(Status.RESOURCE_EXHAUSTED
                    .withDescription("the space is composing " + (pool.getQueue().size() + pool.getActiveCount())
                            + " plans already; ask again later").asRuntimeException());
        }
    }

    /** Plans being composed or waiting. */
    public int busy() {
        return pool.getActiveCount() + pool.getQueue().size();
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
