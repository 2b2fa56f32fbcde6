package dev.jitzoo.space.extended;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import dev.jitzoo.proto.zoo.v1.SimilarKernel;
import dev.jitzoo.proto.zoo.v1.SimilarRequest;
import dev.jitzoo.proto.zoo.v1.SimilarResponse;
import dev.jitzoo.space.lite.LiteSpace;
import java.util.HashSet;
import java.util.Set;

/**
 * The extended space of one op on one device (paper section 5.3): the exploitation set, the best
 * kernels of similar devices from the zoo, about a tenth of the lite space, ahead of the exploration
 * set, the lite space less what the exploitation set already holds. The exploration set is empty
 * once the device kind's own best is settled: elected by sessions from at least {@code settledOrigins}
 * distinct network origins that ranked it in their top five (one address flooding sessions counts
 * once, so it alone never settles a kind).
 *
 * <p>A neighbour's kernel joins only if it is for exactly this op and backend, runs on this device
 * ({@link LiteSpace#fit}), and is not the device kind's own best (the session starts on that one).
 */
public final class ExtendedSpace {

    private final int settledOrigins;

    public ExtendedSpace(int settledOrigins) {
        if (settledOrigins < 1) {
            throw new IllegalArgumentException("settledOrigins must be at least 1, got " + settledOrigins);
        }
        this.settledOrigins = settledOrigins;
    }

    /** What the zoo answered for one op and device, or why it could not be asked. */
    public record ZooAnswer(SimilarResponse similar, String unavailable) {

        public static ZooAnswer of(SimilarResponse similar) {
            return new ZooAnswer(similar, "");
        }

        public static ZooAnswer unavailable(String reason) {
            return new ZooAnswer(SimilarResponse.getDefaultInstance(), reason);
        }
    }

    /** About a tenth of the lite space, at least one. */
    public static int exploitationLimit(int liteCandidates) {
        return Math.max(1, (liteCandidates + 9) / 10);
    }

    /**
     * What to ask the zoo for the exploitation set of {@code liteSpace}: room for four times the set,
     * since some kernels will not run here.
     */
    public static SimilarRequest similarRequest(ComposeResponse liteSpace, OpSpec op, DeviceProfile device, Backend backend) {
        return SimilarRequest.newBuilder().setOp(op).setDevice(device).setBackend(backend)
                .setLimit(Math.min(64, 4 * exploitationLimit(liteSpace.getCandidatesCount()))).build();
    }

    /**
     * Extends {@code liteSpace} (what {@link LiteSpace#compose} returned for this op and device) with
     * the zoo's answer; an unavailable zoo leaves the lite space whole, as the exploration set.
     */
    public ComposeResponse extend(ComposeResponse liteSpace, ZooAnswer zoo, OpSpec op, DeviceProfile device, Backend backend) {
        SimilarResponse similar = zoo.similar();
        boolean settled = similar.getOwn().getFound() && similar.getOwn().getOrigins() >= settledOrigins;
        Schedule own = similar.getOwn().getFound() ? similar.getOwn().getKernel().getSchedule() : null;

        int limit = exploitationLimit(liteSpace.getCandidatesCount());
        Set<Schedule> exploited = new HashSet<>();
        ComposeResponse.Builder out = liteSpace.toBuilder().clearCandidates()
                .setSettled(settled).setZooUnavailable(zoo.unavailable()).setOwn(similar.getOwn());
        for (SimilarKernel neighbour : similar.getKernelsList()) {
            KernelRef kernel = neighbour.getKernel();
            if (exploited.size() == limit) {
                break;
            }
            if (!kernel.getOp().equals(op) || kernel.getBackend() != backend || kernel.getSchedule().equals(own)
                    || exploited.contains(kernel.getSchedule())) {
                continue;
            }
            LiteSpace.fit(op, device, backend, kernel.getSchedule()).ifPresent(candidate -> {
                exploited.add(candidate.getSchedule());
                out.addCandidates(candidate.toBuilder().setScore(neighbour.getScore())
                        .setSource(CandidateSource.CANDIDATE_SOURCE_EXPLOITATION));
            });
        }
        out.setExploitationSize(exploited.size());
        if (!settled) {
            for (Candidate candidate : liteSpace.getCandidatesList()) {
                if (!exploited.contains(candidate.getSchedule())) {
                    out.addCandidates(candidate.toBuilder().setSource(CandidateSource.CANDIDATE_SOURCE_EXPLORATION));
                }
            }
        }
        return out.build();
    }
}
