package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.kernel.v1.SplitAxis;
import dev.jitzoo.proto.rules.ScheduleRules;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import java.util.ArrayList;
import java.util.List;

/**
 * The space of the ops a schedule only vectorizes and unrolls (add, mul, softmax, layer_norm):
 * SIMD where the device has it, and the loop over a row unrolled 1 to 8 times. Memory-bound
 * ops, so the whole space is small enough to try; vectors first, then the unrolls that usually
 * hide a load's latency without spilling.
 */
final class RowOpSpace {

    /** Unroll factors, most promising first. */
    private static final int[] UNROLLS = {2, 4, 1, 8};

    private RowOpSpace() {
    }

    static List<Candidate> build(boolean simd) {
        List<Candidate> all = new ArrayList<>();
        for (boolean vectorize : simd ? new boolean[] {true, false} : new boolean[] {false}) {
            for (int i = 0; i < UNROLLS.length; i++) {
                Schedule schedule = Schedule.newBuilder().setVectorize(vectorize).setUnroll(UNROLLS[i]).build();
                all.add(Candidate.newBuilder().setSchedule(schedule).setSource(CandidateSource.CANDIDATE_SOURCE_EXPLORATION)
                        .setScore((vectorize ? UNROLLS.length : 0) + UNROLLS.length - i).build());
            }
        }
        return all;
    }

    /**
     * Whether a schedule made elsewhere fits: one the compiler takes ({@link ScheduleRules#rowOpProblem}:
     * vectorize and unroll only), unsplit (the gateway splits a session's schedules), vectorized
     * only where the device has SIMD.
     */
    static boolean runs(Schedule s, boolean simd) {
        return ScheduleRules.rowOpProblem(s) == null && s.getSplitGrain() == 0
                && s.getSplitAxis() == SplitAxis.SPLIT_AXIS_UNSPECIFIED && (simd || !s.getVectorize());
    }
}
