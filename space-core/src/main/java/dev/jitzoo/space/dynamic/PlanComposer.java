package dev.jitzoo.space.dynamic;

import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.domain.OpShapes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * FTuner's runtime (its section V) for one extent: the program pool of algorithm 2 (one uKernel
 * repeated, or a larger one n1 times and a smaller one n2 times over the rest) ranked by the
 * synthesis index SIA = c0·CMR + c1·Pad + c2·Occ, each term weighted by the rows its pieces compute.
 * CMR is a piece's intensity over ψ·ridge, capped at 1 (compute bound is as good as it gets). Ties
 * go to the plan with fewer calls (each reads all of B again), then to the one with larger pieces.
 */
public final class PlanComposer {

    private static final Comparator<Plan> BEST_FIRST = Comparator.comparingDouble(Plan::sia).reversed()
            .thenComparingInt(Plan::calls)
            .thenComparing(p -> -p.pieces().get(0).rows());

    private final UKernelSet set;

    public PlanComposer(UKernelSet set) {
        this.set = set;
    }

    /** The best plan for an extent of the set's range; throws {@link InvalidOpException} outside it. */
    public Plan compose(int extent) {
        return pool(extent).stream().min(BEST_FIRST).orElseThrow();
    }

    /** Every program of algorithm 2 for the extent, unranked. */
    List<Plan> pool(int extent) {
        if (extent < set.lo() || extent > set.hi()) {
            throw new InvalidOpException("extent " + extent + " is outside the range " + set.lo() + ".." + set.hi()
                    + " the uKernel set was built for");
        }
        List<UKernel> kernels = set.kernels();
        List<Plan> pool = new ArrayList<>();
        for (int i = kernels.size() - 1; i >= 0; i--) {
            UKernel big = kernels.get(i);
            pool.add(plan(extent, List.of(new Use(big, (int) OpShapes.ceilDiv(extent, big.rows())))));
            for (int j = i - 1; j >= 0; j--) {
                UKernel small = kernels.get(j);
                for (int n1 = extent / big.rows(); n1 >= 1; n1--) {
                    int rest = extent - n1 * big.rows();
                    if (rest > 0) {
                        pool.add(plan(extent, List.of(new Use(big, n1), new Use(small, (int) OpShapes.ceilDiv(rest, small.rows())))));
                    }
                }
            }
        }
        return pool;
    }

    private record Use(UKernel kernel, int count) {
        long rows() {
            return (long) kernel.rows() * count;
        }
    }

    private Plan plan(int extent, List<Use> uses) {
        Thresholds t = set.thresholds();
        long padded = uses.stream().mapToLong(Use::rows).sum();
        double cmr = 0;
        double occ = 0;
        for (Use u : uses) {
            double share = (double) u.rows() / padded;
            cmr += share * Math.min(1, u.kernel().intensity() / Math.max(1e-12, t.psi() * t.ridge()));
            occ += share * UKernelSet.occupancy(u.count(), t.cores());
        }
        double sia = t.c0() * cmr + t.c1() * ((double) extent / padded) + t.c2() * occ;
        return new Plan(extent, uses.stream().map(u -> new Plan.Piece(u.kernel().rows(), u.count())).toList(), (int) padded, sia);
    }
}
