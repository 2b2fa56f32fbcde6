package dev.jitzoo.gateway.session;

import dev.jitzoo.proto.gateway.v1.Hello;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * Where sessions outlive their connection, so that a client whose network dropped, or whose
 * gateway restarted, takes its session up again with a resume token: the Hello, every kernel
 * sent to it and the ops whose reports are stored. Shared by every gateway replica; entries
 * expire after a while unused.
 */
public interface SessionStore {

    /** How long a store call may take before the session goes on without it. */
    Duration TIMEOUT = Duration.ofSeconds(2);

    /**
     * A session as kept: enough to check its reports (against the kernels issued and its device
     * kind's peak as the zoo measured it at its Hello, NaN when not measured), to offer what it did
     * not receive, and to resume it only for the tenant and the page (its Origin header, empty
     * when none) it was issued to.
     */
    record Kept(String sessionId, Hello hello, List<KernelRef> issued, Set<String> sent, Set<Integer> reportedOps,
                double kindPeakGflops, String tenant, String pageOrigin) {
    }

    /**
     * Keeps a new session under a token, with the kernels of its Welcome (issued and sent), its
     * device kind's peak, and the tenant and page it was issued to.
     */
    Uni<Void> create(String token, String sessionId, Hello hello, List<KernelRef> initial, double kindPeakGflops, String tenant,
                     String pageOrigin);

    /** Adds kernels issued to the session, before they are queued: a resumed session accepts reports of every kernel it was sent. */
    Uni<Void> issued(String token, List<KernelRef> kernels);

    /** Marks kernels as sent: a resumed session is offered the issued ones it was not sent. */
    Uni<Void> sent(String token, List<String> kernelIds);

    /**
     * Marks an op of the session (its index in the Hello) as reported and stored; fails after
     * {@link #TIMEOUT}. On every report's path, so no reactive chain.
     */
    CompletionStage<Void> reported(String token, int opIndex);

    /** The session kept under a token; empty for an unknown or expired one. */
    Uni<Optional<Kept>> find(String token);
}
