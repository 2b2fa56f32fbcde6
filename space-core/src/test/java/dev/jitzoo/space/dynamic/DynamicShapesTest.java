package dev.jitzoo.space.dynamic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.Schedule;
import dev.jitzoo.space.device.DeviceProfiles;
import dev.jitzoo.space.domain.InvalidOpException;
import dev.jitzoo.space.lite.LiteSpace;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** FTuner's formulas against hand-computed values, the uKernel filters, plan composition and bad input. */
class DynamicShapesTest {

    private static final DeviceProfile DEVICE = DeviceProfiles.load("this-machine-wasm");
    private static final LiteSpace SPACE = new LiteSpace(LiteSpace.DEFAULT_RELAXATION, Integer.MAX_VALUE);

    private static UKernelSet bert(Thresholds t) {
        return UKernelSet.build(1, 512, 768, 768, DEVICE, SPACE, t);
    }

    @Test
    void padIsUsefulOverComputedRows() {
        // extents 1..8 with 4-row calls: (1+..+8) / (4·4 + 4·8) = 36 / 48
        assertEquals(0.75, UKernelSet.pad(4, 1, 8), 1e-12);
        // 1..512 with 64 rows: 131328 / (64·64·(1+..+8)) = 131328 / 147456
        assertEquals(0.890625, UKernelSet.pad(64, 1, 512), 1e-12);
        assertEquals(1.0, UKernelSet.pad(1, 3, 9), 1e-12);
    }

    @Test
    void occupancyRoundsCallsUpToWholeWavesOfCores() {
        assertEquals(5.0 / 8, UKernelSet.occupancy(5, 4), 1e-12);
        assertEquals(1.0, UKernelSet.occupancy(8, 4), 1e-12);
        // over 1..4 with 1-row calls on 2 cores: calls 1, 2, 3, 4 -> 1/2, 1, 3/4, 1
        assertEquals((0.5 + 1 + 0.75 + 1) / 4, UKernelSet.occupancy(1, 1, 4, 2), 1e-12);
        assertEquals(1.0, UKernelSet.occupancy(7, 1, 512, 1), 1e-12);
    }

    @Test
    void intensityIsFlopsOverBytesWithBReadOncePerCall() {
        // 2·4·768·768 / (4·(4·768 + 768·768 + 4·768))
        assertEquals(4718592.0 / 2383872.0, UKernelSet.intensity(4, 768, 768), 1e-12);
        assertEquals(2.0 * 37 * 29 / (4.0 * (37 + 37 * 29 + 29)), UKernelSet.intensity(1, 37, 29), 1e-12);
    }

    @Test
    void crossPickTradesOccupancyForLessPadding() {
        Thresholds t = Thresholds.WASM;
        Schedule s = Schedule.getDefaultInstance();
        // occupancy 0.94 passes once λ has walked down 10 steps, when ε has walked up to 0.60
        assertTrue(UKernelSet.crossPick(new UKernel(8, s, 0.61, 0.94, 10), t));
        assertFalse(UKernelSet.crossPick(new UKernel(8, s, 0.59, 0.94, 10), t));
        assertTrue(UKernelSet.crossPick(new UKernel(8, s, 0.50, 1.0, 10), t));
        assertFalse(UKernelSet.crossPick(new UKernel(8, s, 0.49, 1.0, 10), t));
        assertFalse(UKernelSet.crossPick(new UKernel(8, s, 1.0, 0.89, 10), t)); // under λ min whatever the padding
    }

    @Test
    void bertSetIsAlignedComputeBoundAndWithinTheRange() {
        UKernelSet set = bert(Thresholds.WASM);
        // 1 and 2 rows stream B for too few flops (0.5 and 0.99 flops per byte under a ridge of 1)
        assertEquals(List.of(4, 8, 16, 32, 64, 128, 256, 512), set.kernels().stream().map(UKernel::rows).toList());
        for (UKernel u : set.kernels()) {
            assertEquals(0, u.rows() % Math.max(1, u.schedule().getY0()), u.rows() + " rows, tile " + u.schedule());
            assertTrue(u.intensity() >= 1 && u.pad() >= 0.5 && u.occupancy() == 1.0, u.toString());
        }
        // ψ = 0 keeps every power of two, one row included
        assertEquals(1, bert(Thresholds.WASM.withPsi(0)).kernels().get(0).rows());
        // a short range drops uKernels mostly padding: 128 rows cover 1..70 at 27% useful rows
        List<Integer> shortRange = UKernelSet.build(1, 70, 37, 29, DEVICE, SPACE, Thresholds.WASM).kernels().stream()
                .map(UKernel::rows).toList();
        assertEquals(List.of(4, 8, 16, 32, 64), shortRange);
    }

    @Test
    void everyExtentIsCoveredWithLessPaddingThanTheSmallestUKernel() {
        UKernelSet set = bert(Thresholds.WASM);
        PlanComposer composer = new PlanComposer(set);
        Set<Integer> rows = set.kernels().stream().map(UKernel::rows).collect(Collectors.toSet());
        for (int s = 1; s <= 512; s++) {
            Plan p = composer.compose(s);
            int sum = p.pieces().stream().mapToInt(x -> x.rows() * x.count()).sum();
            assertEquals(p.paddedExtent(), sum, "extent " + s);
            assertTrue(p.paddedExtent() >= s && p.paddedExtent() - s < 4, "extent " + s + ": " + p);
            assertTrue(p.pieces().size() <= 2 && p.pieces().stream().allMatch(x -> rows.contains(x.rows()) && x.count() > 0), p.toString());
        }
        // 53 rows: 56 is the least padded extent; of its 4-call programs the one with the larger first piece
        Plan p53 = composer.compose(53);
        assertEquals(List.of(new Plan.Piece(32, 1), new Plan.Piece(8, 3)), p53.pieces());
        assertEquals(1 + 53.0 / 56 + 1, p53.sia(), 1e-12);
        // a multiple of a uKernel is one call; 192 = 128 + 64 in two calls rather than 3 x 64
        assertEquals(List.of(new Plan.Piece(64, 1)), composer.compose(64).pieces());
        assertEquals(2, composer.compose(192).calls());
    }

    @Test
    void siaWeighsInTheComputeToMemoryRatioWhenSmallUKernelsAreKept() {
        // with ψ = 0.25 one row is kept (0.5 flops per byte, CMR capped at 1): extent 1 needs no padding
        PlanComposer loose = new PlanComposer(bert(Thresholds.WASM.withPsi(0.25)));
        assertEquals(List.of(new Plan.Piece(1, 1)), loose.compose(1).pieces());
        // with ψ = 1 its CMR would be 0.5: the plan pads to 4 rows instead
        assertEquals(4, new PlanComposer(bert(Thresholds.WASM)).compose(1).paddedExtent());
    }

    @Test
    void badRangesShapesExtentsAndThresholdsAreRefusedWithTheReason() {
        assertTrue(assertThrows(InvalidOpException.class, () -> UKernelSet.build(0, 10, 8, 8, DEVICE, SPACE, Thresholds.WASM))
                .getMessage().contains("1 <= lo <= hi"));
        assertThrows(InvalidOpException.class, () -> UKernelSet.build(10, 9, 8, 8, DEVICE, SPACE, Thresholds.WASM));
        assertTrue(assertThrows(InvalidOpException.class, () -> UKernelSet.build(1, 10, 0, 8, DEVICE, SPACE, Thresholds.WASM))
                .getMessage().contains("dimension 1 must be positive"));
        assertTrue(assertThrows(InvalidOpException.class, () -> bert(Thresholds.WASM.withPsi(1000))).getMessage()
                .contains("lower psi"));
        PlanComposer composer = new PlanComposer(bert(Thresholds.WASM));
        assertTrue(assertThrows(InvalidOpException.class, () -> composer.compose(513)).getMessage().contains("outside the range 1..512"));
        assertThrows(InvalidOpException.class, () -> composer.compose(0));
        assertThrows(IllegalArgumentException.class, () -> Thresholds.WASM.withPsi(-1));
        assertThrows(IllegalArgumentException.class,
                () -> new Thresholds(0.9, 0.5, 0.01, 0.95, 0.9, 0.001, 1, 1, 1, 1, 1, 1)); // ε max under ε min
        assertThrows(IllegalArgumentException.class,
                () -> new Thresholds(0.5, 0.95, 0.01, 0.95, 0.9, 0.001, 1, 1, 0, 1, 1, 1)); // no cores
    }
}
