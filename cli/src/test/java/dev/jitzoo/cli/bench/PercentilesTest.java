package dev.jitzoo.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The order statistics behind the benches' figures, on values whose answers are known. */
class PercentilesTest {

    private static final List<Integer> ONE_TO_HUNDRED = IntStream.rangeClosed(1, 100).boxed().toList();

    @Test
    void theMedianIsTheMiddleOrTheMeanOfTheTwoMiddleOnes() {
        assertEquals(3.0, Percentiles.median(List.of(5.0, 1.0, 3.0)), "unsorted input");
        assertEquals(2.5, Percentiles.median(List.of(4.0, 1.0, 2.0, 3.0)));
        assertEquals(3.0, Percentiles.median(List.of(9L, 1L, 3L, 2L, 7L)), "longs, as the clang timings are");
        assertTrue(Double.isNaN(Percentiles.median(List.of())));
    }

    @Test
    void theTwoReadingsOfAPercentileDifferWhereTheRankIsWhole() {
        assertEquals(50.0, Percentiles.nearestRank(ONE_TO_HUNDRED, 0.5));
        assertEquals(51.0, Percentiles.rankAbove(ONE_TO_HUNDRED, 0.5));
        assertEquals(99.0, Percentiles.nearestRank(ONE_TO_HUNDRED, 0.99));
        assertEquals(100.0, Percentiles.rankAbove(ONE_TO_HUNDRED, 0.99));
        List<Integer> seven = List.of(70, 10, 50, 30, 20, 60, 40);
        assertEquals(40.0, Percentiles.nearestRank(seven, 0.5), "3.5 of 7: the 4th either way");
        assertEquals(40.0, Percentiles.rankAbove(seven, 0.5));
        assertEquals(70.0, Percentiles.nearestRank(seven, 0.99));
        assertEquals(70.0, Percentiles.rankAbove(seven, 0.99));
    }

    @Test
    void theMaxIsTheLargestAndNothingGivesNaN() {
        assertEquals(100.0, Percentiles.max(ONE_TO_HUNDRED));
        assertEquals(2.0, Percentiles.nearestRank(List.of(2.0), 0.0001), "one value is every percentile");
        assertTrue(Double.isNaN(Percentiles.max(List.of())));
        assertTrue(Double.isNaN(Percentiles.nearestRank(List.of(), 0.5)));
        assertTrue(Double.isNaN(Percentiles.rankAbove(List.of(), 0.5)));
    }
}
