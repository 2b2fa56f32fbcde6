package dev.jitzoo.gateway.jit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Multi;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * One downstream call at a time per key: the sessions that ask for the same thing while it runs
 * join it instead of calling again, each getting every item from the first (replayed to those who
 * join late) and its end. The call runs to its end whoever leaves; once it ended, the next ask
 * calls again. Keeps a herd of same-kind pages that open together (each missing the gateway's
 * kernel memory before the first batch came back) from asking codegen for the same kernels once a page.
 */
final class InFlight<K, T> {

    private static final String METER = "jitzoo_gateway_codegen_calls_total";
    private static final String DESCRIPTION =
            "Calls to codegen the gateway made (joined=false), and asks that joined one already running (joined=true)";

    private final ConcurrentHashMap<K, Multi<T>> running = new ConcurrentHashMap<>();
    private final Counter calls;
    private final Counter joined;

    /** Counted as {@code jitzoo_gateway_codegen_calls_total{call=name, joined=false|true}}. */
    InFlight(String name, MeterRegistry metrics) {
        this.calls = Counter.builder(METER).tag("call", name).tag("joined", "false").description(DESCRIPTION).register(metrics);
        this.joined = Counter.builder(METER).tag("call", name).tag("joined", "true").description(DESCRIPTION).register(metrics);
    }

    /** The call running for {@code key}, or {@code call}'s, started now and shared until it ends. */
    Multi<T> join(K key, Supplier<Multi<T>> call) {
        AtomicReference<Multi<T>> made = new AtomicReference<>();
        Multi<T> shared = running.computeIfAbsent(key, k -> {
            Multi<T> replayed = Multi.createBy().replaying().ofMulti(
                    call.get().onTermination().invoke(() -> running.remove(k, made.get())));
            made.set(replayed);
            return replayed;
        });
        (shared == made.get() ? calls : joined).increment();
        return shared;
    }
}
