package dev.jitzoo.gateway.jit;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Tells a stalled producer from a slow consumer: armed while items are asked for and none has
 * come, it runs {@code onStall} once when {@code timeout} passes. While the consumer holds (a
 * client that grants no credit), nothing is timed. (Mutiny's own item timeout counts from the last
 * item, whether or not more were asked for.)
 */
public final class StallGuard {

    private final Duration timeout;
    private final Runnable onStall;
    private long outstanding;
    private boolean holding;
    private boolean done;
    private ScheduledFuture<?> armed;
    /** Counts armings: a timer that fires after it was disarmed (and another armed) is not this one's. */
    private long armings;

    public StallGuard(Duration timeout, Runnable onStall) {
        this.timeout = timeout;
        this.onStall = onStall;
    }

    /** The stream, watched: its requests arm the guard, its items disarm it, its end stops it. */
    public <T> Multi<T> watch(Multi<T> stream) {
        return stream.onRequest().invoke(this::asked).onItem().invoke(item -> received()).onTermination().invoke(this::stop);
    }

    /** Completes with {@code wait}; nothing is timed until it does (the consumer, not the producer, is waiting). */
    public Uni<Void> holding(CompletionStage<Void> wait) {
        synchronized (this) {
            holding = true;
            disarm();
        }
        return Uni.createFrom().completionStage(wait).onTermination().invoke(() -> {
            synchronized (this) {
                holding = false;
                arm();
            }
        });
    }

    private synchronized void asked(long n) {
        outstanding = outstanding + n < 0 ? Long.MAX_VALUE : outstanding + n;
        arm();
    }

    private synchronized void received() {
        outstanding = outstanding == Long.MAX_VALUE ? outstanding : outstanding - 1;
        disarm();
        arm();
    }

    private synchronized void stop() {
        done = true;
        disarm();
    }

    private void arm() {
        if (armed == null && outstanding > 0 && !holding && !done) {
            long arming = ++armings;
            armed = Infrastructure.getDefaultWorkerPool().schedule(() -> fire(arming), timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void disarm() {
        if (armed != null) {
            armed.cancel(false);
            armed = null;
        }
    }

    private void fire(long arming) {
        synchronized (this) {
            if (done || armed == null || arming != armings) {
                return;
            }
            armed = null;
            done = true;
        }
        onStall.run();
    }
}
