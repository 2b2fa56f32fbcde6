package dev.jitzoo.gateway.jit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.space.v1.ComposeRequest;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.zoo.v1.ResolvedKernel;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Pages of one kind share the space's answer: one call per question and interval, failures not kept, no election kept past a report. */
class ComposeCacheTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final AtomicInteger calls = new AtomicInteger();

    private static final DeviceProfile KIND = DeviceProfile.newBuilder().setFingerprint("kind-a").build();

    private static ComposeRequest question(int m) {
        return question(m, KIND);
    }

    private static ComposeRequest question(int m, DeviceProfile device) {
        return ComposeRequest.newBuilder().setTenant("t").setDevice(device).setBackend(Backend.BACKEND_WASM)
                .setOp(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(m).addShape(8).addShape(8)).build();
    }

    private static ComposeResponse answer(int n) {
        return ComposeResponse.newBuilder().setLiteSpaceSize(n).build();
    }

    private static ComposeResponse elected(int n) {
        return answer(n).toBuilder().setOwn(ResolvedKernel.newBuilder().setFound(true)).build();
    }

    private ComposeResponse ask(ComposeCache cache, ComposeRequest question, ComposeResponse answer) {
        return cache.get(question, call(CompletableFuture.completedFuture(answer))).await().atMost(WAIT);
    }

    /** A call that answers when {@code answered} completes, counting how often it is made. */
    private java.util.function.Supplier<Uni<ComposeResponse>> call(CompletableFuture<ComposeResponse> answered) {
        return () -> {
            calls.incrementAndGet();
            return Uni.createFrom().completionStage(answered);
        };
    }

    @Test
    void hellosAskingTheSameWhileTheCallIsOnItsWayShareIt() {
        ComposeCache cache = new ComposeCache(Duration.ofMinutes(1), new SimpleMeterRegistry());
        CompletableFuture<ComposeResponse> answered = new CompletableFuture<>();
        CompletableFuture<ComposeResponse> first = cache.get(question(1), call(answered)).subscribeAsCompletionStage();
        CompletableFuture<ComposeResponse> second = cache.get(question(1), call(answered)).subscribeAsCompletionStage();
        CompletableFuture<ComposeResponse> other = cache.get(question(2), call(CompletableFuture.completedFuture(answer(2))))
                .subscribeAsCompletionStage();
        answered.complete(answer(1));
        assertEquals(answer(1), first.join());
        assertEquals(answer(1), second.join());
        assertEquals(answer(2), other.join());
        assertEquals(2, calls.get(), "one call per distinct question");
        assertEquals(answer(1), cache.get(question(1), call(new CompletableFuture<>())).await().atMost(WAIT), "answered from memory");
        assertEquals(2, calls.get());
    }

    @Test
    void anAnswerIsKeptForTheTtlOnly() throws Exception {
        ComposeCache cache = new ComposeCache(Duration.ofMillis(100), new SimpleMeterRegistry());
        cache.get(question(1), call(CompletableFuture.completedFuture(answer(1)))).await().atMost(WAIT);
        Thread.sleep(300);
        assertEquals(answer(7), cache.get(question(1), call(CompletableFuture.completedFuture(answer(7)))).await().atMost(WAIT),
                "an answer older than the ttl is asked again");
        assertEquals(2, calls.get());
    }

    @Test
    void aFailedCallIsNotKept() {
        ComposeCache cache = new ComposeCache(Duration.ofMinutes(1), new SimpleMeterRegistry());
        IllegalStateException down = new IllegalStateException("space down");
        assertSame(down, assertThrows(IllegalStateException.class,
                () -> cache.get(question(1), call(CompletableFuture.failedFuture(down))).await().atMost(WAIT)));
        assertEquals(answer(1), cache.get(question(1), call(CompletableFuture.completedFuture(answer(1)))).await().atMost(WAIT),
                "the next Hello asks again");
        assertEquals(2, calls.get());
    }

    @Test
    void aHelloThatGivesUpDoesNotCancelTheCallOthersWaitOn() {
        ComposeCache cache = new ComposeCache(Duration.ofMinutes(1), new SimpleMeterRegistry());
        CompletableFuture<ComposeResponse> answered = new CompletableFuture<>();
        Cancellable closed = cache.get(question(1), call(answered)).subscribe().with(a -> { });
        CompletableFuture<ComposeResponse> waiting = cache.get(question(1), call(answered)).subscribeAsCompletionStage();
        closed.cancel();
        answered.complete(answer(1));
        assertEquals(answer(1), waiting.join(), "the other Hello still gets the answer");
        assertEquals(1, calls.get());
    }

    @Test
    void aReportOfTheKindDropsItsAnswersWithoutAnElection() {
        ComposeCache cache = new ComposeCache(Duration.ofMinutes(1), new SimpleMeterRegistry());
        DeviceProfile other = DeviceProfile.newBuilder().setFingerprint("kind-b").build();
        ask(cache, question(1), answer(1));
        ask(cache, question(2), elected(2));
        ask(cache, question(1, other), answer(3));
        cache.reported("t", KIND, Backend.BACKEND_WASM);
        assertEquals(elected(4), ask(cache, question(1), elected(4)), "the unelected answer is asked again: the report may have elected");
        assertEquals(elected(2), ask(cache, question(2), elected(5)), "an elected answer stays for its ttl");
        assertEquals(answer(3), ask(cache, question(1, other), answer(6)), "another kind's answer stays");
        assertEquals(4, calls.get());
        cache.reported("t", KIND, Backend.BACKEND_WGSL);
        cache.reported("u", KIND, Backend.BACKEND_WASM);
        cache.reported("t", KIND, Backend.BACKEND_WASM);
        ask(cache, question(1, other), answer(6));
        ask(cache, question(1), elected(4));
        assertEquals(4, calls.get(), "reports of other backends, tenants or of kinds with elections drop nothing");
    }

    @Test
    void aZeroTtlAsksEveryTime() {
        ComposeCache cache = new ComposeCache(Duration.ZERO, new SimpleMeterRegistry());
        for (int i = 0; i < 3; i++) {
            cache.get(question(1), call(CompletableFuture.completedFuture(answer(1)))).await().atMost(WAIT);
        }
        assertEquals(3, calls.get());
    }
}
