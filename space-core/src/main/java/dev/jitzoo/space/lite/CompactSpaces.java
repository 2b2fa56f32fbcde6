package dev.jitzoo.space.lite;

import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.proto.space.v1.Candidate;
import dev.jitzoo.proto.space.v1.CandidateSource;
import dev.jitzoo.space.domain.OpShapes;
import java.util.List;

/** What the compact-weight products' spaces (int8, 4-bit, float16) share. */
final class CompactSpaces {

    private CompactSpaces() {
    }

    /** The schedule with each unroll in turn, each scored 5% below the one before. */
    static void addUnrolled(List<Candidate> all, Schedule.Builder schedule, int[] unrolls, double score) {
        for (int i = 0; i < unrolls.length; i++) {
            all.add(Candidate.newBuilder().setSchedule(schedule.setUnroll(unrolls[i]).build())
                    .setSource(CandidateSource.CANDIDATE_SOURCE_EXPLORATION).setScore(score * (1 - 0.05 * i)).build());
        }
    }

    /** The share of an axis's padded extent that is real: {@code extent} over whole tiles (heuristic 4). */
    static double fill(int extent, int tile) {
        return (double) extent / (OpShapes.ceilDiv(extent, tile) * tile);
    }
}
