package dev.jitzoo.space.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.proto.kernel.v1.PrimitiveSpeedup;
import dev.jitzoo.proto.zoo.v1.DevicePrimitives;
import dev.jitzoo.proto.zoo.v1.PrimitivesResponse;
import dev.jitzoo.space.primitives.MicrobenchResult;
import dev.jitzoo.space.primitives.PrimitiveTable;
import dev.jitzoo.space.primitives.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The zoo's fleet results as the primitive table reads them. */
class FleetPrimitivesTest {

    @Test
    void aFleetDeviceWhereAFixedPrimitiveCostsReopensIt() {
        PrimitivesResponse zoo = PrimitivesResponse.newBuilder().addDevices(DevicePrimitives.newBuilder()
                .setFingerprint("phone").setEngine("Chrome 140").setReports(3)
                .addSpeedups(speedup(Primitive.PRIMITIVE_CACHE_READ, 0.8))
                .addSpeedups(speedup(Primitive.PRIMITIVE_LOOP_ORDER, 1.3))).build();
        List<MicrobenchResult> fleet = FleetPrimitives.results(zoo);
        assertEquals(List.of(new MicrobenchResult("fleet", "phone", "Chrome 140",
                Map.of("cache_read", 0.8, "loop_order", 1.3))), fleet);

        assertEquals(Verdict.ON, PrimitiveTable.DEFAULT.verdict(dev.jitzoo.space.primitives.Primitive.CACHE_READ));
        List<MicrobenchResult> all = new ArrayList<>(PrimitiveTable.shipped());
        all.addAll(fleet);
        PrimitiveTable pooled = PrimitiveTable.derive(all, PrimitiveTable.DEFAULT_THRESHOLD);
        assertEquals(Verdict.OPEN, pooled.verdict(dev.jitzoo.space.primitives.Primitive.CACHE_READ), "0.8 < 1 − θ on one device");
        assertEquals(Verdict.ON, pooled.verdict(dev.jitzoo.space.primitives.Primitive.VECTORIZE), "unmeasured there: unchanged");
    }

    private static PrimitiveSpeedup speedup(Primitive p, double s) {
        return PrimitiveSpeedup.newBuilder().setPrimitive(p).setSpeedup(s).build();
    }
}
