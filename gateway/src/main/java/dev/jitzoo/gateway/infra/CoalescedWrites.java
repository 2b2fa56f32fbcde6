package dev.jitzoo.gateway.infra;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * Field writes to a session's hash, at most one in flight per session: fields set while one is in
 * flight wait and go together in the next. A quiet session's field is written at once; a busy
 * one's (a page sending its reports, one per op, all at once) take one write instead of one each.
 * Each set completes when the write that carries it does, so what is acknowledged after it is
 * stored, as with a write per field.
 */
final class CoalescedWrites {

    /** Writes some fields of a key's hash; completes once they are stored. */
    private final BiFunction<String, Map<String, byte[]>, CompletionStage<?>> write;
    private final ConcurrentHashMap<String, Pending> pending = new ConcurrentHashMap<>();

    /** A key's fields waiting for the write in flight, and the future of the write that will carry them. */
    private static final class Pending {
        Map<String, byte[]> fields = new HashMap<>();
        CompletableFuture<Void> written = new CompletableFuture<>();
    }

    CoalescedWrites(BiFunction<String, Map<String, byte[]>, CompletionStage<?>> write) {
        this.write = write;
    }

    /** Sets fields of a key's hash: written at once when no write of that key is in flight, else with the next one. */
    CompletionStage<Void> set(String key, Map<String, byte[]> fields) {
        CompletableFuture<Void>[] carried = new CompletableFuture[1];
        boolean[] idle = {false};
        pending.compute(key, (k, waiting) -> {
            if (waiting == null) {
                waiting = new Pending();
                idle[0] = true;
            }
            waiting.fields.putAll(fields);
            carried[0] = waiting.written;
            return waiting;
        });
        if (idle[0]) {
            flush(key);
        }
        return carried[0];
    }

    /** Keys with fields waiting or a write in flight. */
    int keys() {
        return pending.size();
    }

    /** Writes what waits for the key; once stored, writes what came meanwhile, or forgets the key when nothing did. */
    private void flush(String key) {
        Map<String, byte[]>[] fields = new Map[1];
        CompletableFuture<Void>[] written = new CompletableFuture[1];
        pending.computeIfPresent(key, (k, waiting) -> {
            fields[0] = waiting.fields;
            written[0] = waiting.written;
            waiting.fields = new HashMap<>();
            waiting.written = new CompletableFuture<>();
            return waiting;
        });
        CompletionStage<?> stored;
        try {
            stored = write.apply(key, fields[0]);
        } catch (RuntimeException e) {
            stored = CompletableFuture.failedFuture(e);
        }
        stored.whenComplete((ignored, failure) -> {
            boolean[] more = {false};
            pending.computeIfPresent(key, (k, waiting) -> {
                more[0] = !waiting.fields.isEmpty();
                return more[0] ? waiting : null;
            });
            if (failure == null) {
                written[0].complete(null);
            } else {
                written[0].completeExceptionally(failure);
            }
            if (more[0]) {
                flush(key);
            }
        });
    }
}
