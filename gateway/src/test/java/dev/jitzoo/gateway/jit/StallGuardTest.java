package dev.jitzoo.gateway.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.smallrye.mutiny.Multi;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A stalled producer is told from a consumer that holds: only items asked for and not coming are timed. */
class StallGuardTest {

    private static final Duration TIMEOUT = Duration.ofMillis(200);

    @Test
    void aProducerThatStopsSendingWhatWasAskedForStallsOnce() throws Exception {
        CountDownLatch stalled = new CountDownLatch(1);
        AtomicInteger stalls = new AtomicInteger();
        StallGuard guard = new StallGuard(TIMEOUT, () -> {
            stalls.incrementAndGet();
            stalled.countDown();
        });
        List<Integer> got = new CopyOnWriteArrayList<>();
        guard.watch(Multi.createFrom().<Integer>emitter(e -> {
            e.emit(1);
            e.emit(2); // and nothing more, never completing
        })).subscribe().with(got::add);
        assertTrue(stalled.await(5, TimeUnit.SECONDS), "the stall is seen");
        Thread.sleep(3 * TIMEOUT.toMillis());
        assertEquals(1, stalls.get(), "and told once");
        assertEquals(List.of(1, 2), got);
    }

    @Test
    void aConsumerThatHoldsIsNotAStalledProducer() throws Exception {
        AtomicInteger stalls = new AtomicInteger();
        StallGuard guard = new StallGuard(TIMEOUT, stalls::incrementAndGet);
        CompletableFuture<Void> room = new CompletableFuture<>();
        List<Integer> got = new CopyOnWriteArrayList<>();
        // one item, then the consumer waits for room (a client granting no credit) far past the timeout
        guard.watch(Multi.createFrom().<Integer>emitter(e -> e.emit(1)))
                .onItem().transformToUniAndConcatenate(i -> {
                    got.add(i);
                    return guard.holding(room);
                })
                .subscribe().with(i -> { });
        Thread.sleep(5 * TIMEOUT.toMillis());
        assertEquals(0, stalls.get(), "holding is not stalling");
        assertEquals(List.of(1), got);
        room.complete(null); // room again: now the missing item is timed
        Thread.sleep(5 * TIMEOUT.toMillis());
        assertEquals(1, stalls.get());
    }

    @Test
    void aStreamThatEndsIsNeverTimed() throws Exception {
        AtomicInteger stalls = new AtomicInteger();
        StallGuard guard = new StallGuard(TIMEOUT, stalls::incrementAndGet);
        guard.watch(Multi.createFrom().range(0, 5)).subscribe().with(i -> { });
        guard.watch(Multi.createFrom().<Integer>failure(new IllegalStateException("down"))).subscribe().with(i -> { }, f -> { });
        Thread.sleep(3 * TIMEOUT.toMillis());
        assertFalse(stalls.get() > 0, "ended streams do not stall");
    }
}
