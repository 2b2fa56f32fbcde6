package dev.jitzoo.space.dynamic;

import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.ExtentPlan;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.kernel.v1.PlanPiece;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.space.v1.DynamicResponse;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.domain.OpShapes;
import dev.jitzoo.space.lite.LiteSpace;

/**
 * The answer to {@code SpaceService/Dynamic}: the uKernel set of a MatMul whose M varies over
 * {@code lo..hi}, and the plan for every extent of the range. The op's transposeB and epilogue do
 * not change which rows the uKernels take (both are per row); they only travel with the uKernels.
 */
public final class DynamicPlans {

    private DynamicPlans() {
    }

    /** Throws {@link InvalidOpException} for an op that is not a MatMul, a bad range, or no uKernel passing the filters. */
    public static DynamicResponse compose(OpSpec op, int lo, int hi, DeviceProfile device, LiteSpace space, Thresholds thresholds) {
        if (op.getKind() != OpKind.OP_KIND_MATMUL) {
            throw new InvalidOpException("a dynamic M is served for MatMuls only, got " + op.getKind());
        }
        if (Integer.toUnsignedLong(hi) > OpRules.MAX_DYNAMIC_ROWS) {
            throw new InvalidOpException("the dynamic range ends at most at " + OpRules.MAX_DYNAMIC_ROWS + ", got " + Integer.toUnsignedString(hi));
        }
        OpShapes shapes = OpShapes.of(op);
        UKernelSet set = UKernelSet.build(lo, hi, shapes.k(), shapes.n(), device, space, thresholds);
        PlanComposer composer = new PlanComposer(set);
        DynamicResponse.Builder out = DynamicResponse.newBuilder();
        for (UKernel u : set.kernels()) {
            out.addKernels(dev.jitzoo.proto.kernel.v1.UKernel.newBuilder().setRows(u.rows()).setSchedule(u.schedule())
                    .setPad(u.pad()).setOccupancy(u.occupancy()).setIntensity(u.intensity()));
        }
        for (int extent = lo; extent <= hi; extent++) {
            Plan plan = composer.compose(extent);
            ExtentPlan.Builder p = ExtentPlan.newBuilder().setExtent(extent).setPaddedExtent(plan.paddedExtent()).setSia(plan.sia());
            plan.pieces().forEach(piece -> p.addPieces(PlanPiece.newBuilder().setRows(piece.rows()).setCount(piece.count())));
            out.addPlans(p);
        }
        return out.build();
    }
}
