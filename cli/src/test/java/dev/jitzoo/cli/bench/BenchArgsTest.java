package dev.jitzoo.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** How every bench's own JVM reads its arguments. */
class BenchArgsTest {

    @Test
    void readsCountsAndJsonAndRefusesWhatIsNotACount() {
        BenchArgs args = BenchArgs.of(new String[] {"--burst", "500", "--json"});
        assertTrue(args.json());
        assertEquals(500, args.count("--burst", 1000));
        assertEquals(10, args.count("--burst-seconds", 10), "absent: the default");
        assertFalse(BenchArgs.of(new String[] {}).json());
        for (String[] bad : new String[][] {{"--burst"}, {"--burst", "0"}, {"--burst", "-3"}, {"--burst", "x"}, {"--burst", "99999999999"}}) {
            String message = assertThrows(IllegalArgumentException.class, () -> BenchArgs.of(bad).count("--burst", 1)).getMessage();
            assertEquals("--burst takes a positive count", message);
        }
    }

    @Test
    void aCountThatMayBeZeroTakesZeroAndRefusesTheRest() {
        assertEquals(0, BenchArgs.of(new String[] {"--report-warm-up-rounds", "0"}).countOrZero("--report-warm-up-rounds", 4));
        assertEquals(7, BenchArgs.of(new String[] {"--report-warm-up-rounds", "7"}).countOrZero("--report-warm-up-rounds", 4));
        assertEquals(4, BenchArgs.of(new String[] {}).countOrZero("--report-warm-up-rounds", 4), "absent: the default");
        for (String[] bad : new String[][] {{"--w"}, {"--w", "-1"}, {"--w", "00"}, {"--w", "x"}}) {
            String message = assertThrows(IllegalArgumentException.class, () -> BenchArgs.of(bad).countOrZero("--w", 1)).getMessage();
            assertEquals("--w takes a count (0 or more)", message);
        }
    }

    @Test
    void readsThePhasesToRunAndRefusesAnUnknownOne() {
        java.util.List<String> known = java.util.List.of("burst", "reports", "held");
        assertEquals(known, BenchArgs.of(new String[] {"--json"}).only(known), "absent: every phase");
        assertEquals(java.util.List.of("reports"), BenchArgs.of(new String[] {"--only", "reports"}).only(known));
        assertEquals(java.util.List.of("burst", "held"), BenchArgs.of(new String[] {"--only", "burst,held"}).only(known));
        for (String[] bad : new String[][] {{"--only"}, {"--only", "echo"}, {"--only", "burst,"}, {"--only", ""}}) {
            String message = assertThrows(IllegalArgumentException.class, () -> BenchArgs.of(bad).only(known)).getMessage();
            assertEquals("--only takes phases among burst,reports,held", message);
        }
    }
}
