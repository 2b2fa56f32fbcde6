package dev.jitzoo.space.domain;

import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.ComposeResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A fixed set of register tilings that are valid for every shape: the stand-in for the
 * resource-driven lite space (paper Table 1) until that lands. Candidates are ordered by a
 * simple proxy for register reuse, the fraction of loads that feed more than one multiply.
 */
public final class SkeletonSpace {

    private static final int[] ROW_TILES = {1, 2, 4};
    private static final int[] COLUMN_TILES = {4, 8, 16};
    /** SIMD registers a kernel may fill with accumulators on the weakest target (x86-64 V8 has 16). */
    private static final int ACCUMULATOR_BUDGET = 12;

    private final int maxCandidates;

    public SkeletonSpace(int maxCandidates) {
        this.maxCandidates = maxCandidates;
    }

    public ComposeResponse compose(OpSpec op, DeviceProfile device) {
        OpShapes shapes = OpShapes.of(op);
        boolean simd = !device.hasWasm() || device.getWasm().getSimd();
        List<Candidate> candidates = new ArrayList<>();
        for (int y0 : ROW_TILES) {
            for (int x0 : COLUMN_TILES) {
                int accumulators = y0 * x0 / 4;
                if (accumulators > ACCUMULATOR_BUDGET) {
                    continue;
                }
                Schedule schedule = Schedule.newBuilder()
                        .setY0(y0).setX0(x0).setVectorize(simd).build();
                candidates.add(Candidate.newBuilder()
                        .setSchedule(schedule)
                        .setScore(reuse(y0, x0, shapes))
                        .build());
            }
        }
        candidates.sort(Comparator.comparingDouble(Candidate::getScore).reversed());
        return ComposeResponse.newBuilder()
                .addAllCandidates(candidates.subList(0, Math.min(maxCandidates, candidates.size())))
                .setNaiveSpaceSize(naiveSpaceSize(shapes))
                .build();
    }

    /** Multiplies per load in the inner loop, discounted by the padding waste at the edges. */
    static double reuse(int y0, int x0, OpShapes s) {
        double intensity = (double) (y0 * x0) / (y0 + x0);
        double rowUse = (double) s.m() / (Math.ceil((double) s.m() / y0) * y0);
        double columnUse = (double) s.n() / (Math.ceil((double) s.n() / x0) * x0);
        return intensity * rowUse * columnUse;
    }

    /**
     * The naive space: every power-of-two split (or none) of each of the six tile parameters,
     * times vectorize on/off and four unroll factors.
     */
    static long naiveSpaceSize(OpShapes s) {
        long splitsN = splits(s.n()), splitsM = splits(s.m()), splitsK = splits(s.k());
        return splitsN * splitsN * splitsM * splitsM * splitsK * splitsK * 2 * 4;
    }

    private static long splits(int extent) {
        return 2 + (31 - Integer.numberOfLeadingZeros(extent));
    }
}
