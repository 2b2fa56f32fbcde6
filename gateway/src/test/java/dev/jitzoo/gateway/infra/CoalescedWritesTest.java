package dev.jitzoo.gateway.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CoalescedWritesTest {

    private static final byte[] YES = {1};

    /** A store whose writes complete when the test says so, recording what each carried. */
    private static final class SlowStore {
        final List<String> keys = new ArrayList<>();
        final List<Map<String, byte[]>> writes = new ArrayList<>();
        final List<CompletableFuture<Void>> answers = new ArrayList<>();

        synchronized CompletionStage<?> write(String key, Map<String, byte[]> fields) {
            keys.add(key);
            writes.add(Map.copyOf(fields));
            CompletableFuture<Void> answer = new CompletableFuture<>();
            answers.add(answer);
            return answer;
        }

        synchronized CompletableFuture<Void> answer(int i) {
            return answers.get(i);
        }
    }

    @Test
    void fieldsSetWhileAWriteIsInFlightGoTogetherInTheNextAndEachCompletesWithItsWrite() {
        SlowStore store = new SlowStore();
        CoalescedWrites writes = new CoalescedWrites(store::write);
        CompletableFuture<Void> first = writes.set("s1", Map.of("r:0", YES)).toCompletableFuture();
        List<CompletableFuture<Void>> later = new ArrayList<>();
        for (int op = 1; op < 16; op++) {
            later.add(writes.set("s1", Map.of("r:" + op, YES)).toCompletableFuture());
        }
        assertEquals(1, store.writes.size(), "one write in flight per session");
        assertEquals(Map.of("r:0", YES).keySet(), store.writes.get(0).keySet());
        assertFalse(first.isDone());

        store.answer(0).complete(null);
        assertTrue(first.isDone());
        assertEquals(2, store.writes.size(), "the fields set meanwhile went in one write");
        assertEquals(15, store.writes.get(1).size());
        assertTrue(later.stream().noneMatch(CompletableFuture::isDone), "not acknowledged before their write is stored");

        store.answer(1).complete(null);
        assertTrue(later.stream().allMatch(CompletableFuture::isDone));
        assertEquals(0, writes.keys(), "an idle session is forgotten");
        writes.set("s1", Map.of("r:16", YES));
        assertEquals(3, store.writes.size(), "a quiet session's field is written at once");
    }

    @Test
    void sessionsAreWrittenApartAndAFailedWriteFailsOnlyWhatItCarried() {
        SlowStore store = new SlowStore();
        CoalescedWrites writes = new CoalescedWrites(store::write);
        CompletableFuture<Void> a = writes.set("a", Map.of("r:0", YES)).toCompletableFuture();
        CompletableFuture<Void> b = writes.set("b", Map.of("r:0", YES)).toCompletableFuture();
        CompletableFuture<Void> aLater = writes.set("a", Map.of("r:1", YES)).toCompletableFuture();
        assertEquals(List.of("a", "b"), store.keys);

        store.answer(0).completeExceptionally(new IllegalStateException("store down"));
        assertTrue(a.isCompletedExceptionally());
        assertFalse(b.isDone());
        assertFalse(aLater.isDone(), "the next write goes on after a failed one");
        assertEquals(List.of("a", "b", "a"), store.keys);
        store.answer(2).complete(null);
        store.answer(1).complete(null);
        assertTrue(aLater.isDone() && !aLater.isCompletedExceptionally());
        assertTrue(b.isDone() && !b.isCompletedExceptionally());
        assertEquals(0, writes.keys());
    }

    @Test
    void aWriterThatThrowsFailsTheFieldsItWasGiven() {
        CoalescedWrites writes = new CoalescedWrites((key, fields) -> {
            throw new IllegalStateException("no connection");
        });
        CompletableFuture<Void> set = writes.set("a", Map.of("r:0", YES)).toCompletableFuture();
        assertTrue(set.isCompletedExceptionally());
        assertEquals(0, writes.keys());
    }

    @Test
    void everyFieldSetFromManyThreadsIsWrittenOnceAndEveryFutureCompletes() throws Exception {
        List<Map<String, byte[]>> written = new ArrayList<>();
        ExecutorService stores = Executors.newSingleThreadExecutor();
        CoalescedWrites writes = new CoalescedWrites((key, fields) -> CompletableFuture.runAsync(() -> {
            synchronized (written) {
                written.add(Map.copyOf(fields));
            }
        }, stores));
        ExecutorService senders = Executors.newFixedThreadPool(4);
        List<CompletableFuture<Void>> sets = new ArrayList<>();
        for (int op = 0; op < 2000; op++) {
            int field = op;
            sets.add(CompletableFuture.supplyAsync(() -> writes.set("s", Map.of("r:" + field, YES)), senders)
                    .thenCompose(stage -> stage));
        }
        CompletableFuture.allOf(sets.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        senders.shutdown();
        stores.shutdown();
        synchronized (written) {
            assertEquals(2000, written.stream().mapToInt(Map::size).sum(), "each field written once");
        }
        assertEquals(0, writes.keys());
        assertTrue(sets.stream().noneMatch(f -> {
            try {
                f.join();
                return false;
            } catch (CompletionException e) {
                return true;
            }
        }));
    }
}
