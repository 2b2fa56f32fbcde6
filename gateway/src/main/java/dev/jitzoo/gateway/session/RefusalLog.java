package dev.jitzoo.gateway.session;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * Refusals at INFO, at most {@link #PER_SECOND} lines a second: a flood of bad clients shows in
 * the log without filling it. The lines held back are counted, and said with the next one written.
 * (Every refusal is counted in the metrics.)
 */
final class RefusalLog {

    static final int PER_SECOND = 10;

    private final Logger log;
    private final AtomicLong second = new AtomicLong();
    private final AtomicInteger written = new AtomicInteger();
    private final AtomicInteger held = new AtomicInteger();

    RefusalLog(Logger log) {
        this.log = log;
    }

    /** Logs the refusal unless {@link #PER_SECOND} were logged this second; returns whether it did. */
    boolean info(String connectionId, ProtocolException refusal, long nowMs) {
        long now = nowMs / 1000;
        if (second.getAndSet(now) != now) {
            written.set(0);
        }
        if (written.incrementAndGet() > PER_SECOND) {
            held.incrementAndGet();
            return false;
        }
        int heldBack = held.getAndSet(0);
        log.infof("connection %s refused (%s): %s%s", connectionId, refusal.code(), refusal.getMessage(),
                heldBack == 0 ? "" : " (" + heldBack + " refusals not logged before this one)");
        return true;
    }
}
