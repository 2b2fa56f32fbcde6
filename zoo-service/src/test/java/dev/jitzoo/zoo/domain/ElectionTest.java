package dev.jitzoo.zoo.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.KernelRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The election against an anonymous crowd: honest devices time five kernels with noise and report
 * the true ranking; attackers flood from one address, or come from many, rank a slow kernel first
 * with fake-fast latencies and the honest best last with fake-slow ones.
 */
class ElectionTest {

    /** The true latencies of k0..k4 (k0 the fastest), and a slow kernel attackers push. */
    private static final double[] TRUE_MS = {1.00, 1.08, 1.20, 1.35, 1.60};
    private static final KernelRef SLOW = ref("k-slow");

    private static KernelRef ref(String id) {
        return KernelRef.newBuilder().setKernelId(id).build();
    }

    /** An honest session: the five kernels timed with ±6% noise, ranked by what it measured. */
    private static void honest(List<Election.Vote> votes, String session, String origin, Random random) {
        record Timed(int kernel, double ms) {
        }
        List<Timed> timed = new ArrayList<>();
        for (int k = 0; k < TRUE_MS.length; k++) {
            timed.add(new Timed(k, TRUE_MS[k] * (1 + 0.06 * (2 * random.nextDouble() - 1))));
        }
        timed.sort((a, b) -> Double.compare(a.ms(), b.ms()));
        for (int rank = 0; rank < timed.size(); rank++) {
            votes.add(new Election.Vote(session, origin, rank, ref("k" + timed.get(rank).kernel()), timed.get(rank).ms()));
        }
    }

    /** An attacker: the slow kernel first at a fake-fast latency, the honest best last at a fake-slow one. */
    private static void attacker(List<Election.Vote> votes, String session, String origin) {
        votes.add(new Election.Vote(session, origin, 0, SLOW, 0.2));
        votes.add(new Election.Vote(session, origin, 1, ref("k3"), 0.3));
        votes.add(new Election.Vote(session, origin, 2, ref("k4"), 0.4));
        votes.add(new Election.Vote(session, origin, 3, ref("k2"), 5.0));
        votes.add(new Election.Vote(session, origin, 4, ref("k0"), 50.0));
    }

    private static List<Election.Vote> crowd(int honest, int attackers, boolean attackersShareOneOrigin, long seed) {
        Random random = new Random(seed);
        List<Election.Vote> votes = new ArrayList<>();
        for (int i = 0; i < honest; i++) {
            honest(votes, "h" + i, "origin-h" + i, random);
        }
        for (int i = 0; i < attackers; i++) {
            attacker(votes, "a" + i, attackersShareOneOrigin ? "origin-a" : "origin-a" + i);
        }
        return votes;
    }

    @Test
    void ballotsThatBarelyOverlapStillElectAmongTheKernelsMostOriginsRanked() {
        List<Election.Vote> votes = new ArrayList<>();
        for (int i = 0; i < 10; i++) { // each device ranks only the kernel it started from: 5, 3 and 2 origins
            String kernel = i < 5 ? "k-a" : i < 8 ? "k-b" : "k-c";
            votes.add(new Election.Vote("s" + i, "origin-" + i, 0, ref(kernel), kernel.equals("k-c") ? 0.5 : 1.0));
        }
        Election.Result result = Election.elect(votes).orElseThrow(() -> new AssertionError("no quorum of 2/3, still an election"));
        assertEquals("k-a", result.kernel().getKernelId(), "the kernel the most origins ranked; k-c's two are too few to contend");
        assertEquals(5, result.origins());
    }

    @Test
    void oneDeviceElectsItsOwnFastestKernel() {
        Election.Result result = Election.elect(crowd(1, 0, false, 1)).orElseThrow();
        assertEquals(1, result.origins());
        assertTrue(result.kernel().getKernelId().matches("k[01]"), result.kernel().getKernelId());
    }

    @Test
    void theHonestBestWinsAgainstAttackersFromManyOriginsUpToAThirdOfTheSessions() {
        for (int attackers = 0; attackers <= 15; attackers++) { // 30 honest sessions: up to a third attackers
            for (long seed = 0; seed < 20; seed++) {
                Election.Result result = Election.elect(crowd(30, attackers, false, seed)).orElseThrow();
                assertEquals("k0", result.kernel().getKernelId(), attackers + " attackers of " + (30 + attackers) + ", seed " + seed);
                assertTrue(Math.abs(result.medianMs() - TRUE_MS[0]) < 0.05, "latency " + result.medianMs());
            }
        }
    }

    @Test
    void aFloodFromOneAddressWeighsAsOneDevice() {
        Election.Result result = Election.elect(crowd(3, 1000, true, 7)).orElseThrow();
        assertEquals("k0", result.kernel().getKernelId());
        assertEquals(4, result.origins());
        assertEquals(1003, result.sessions());
    }

    @Test
    void attackersAloneElectTheirKernelButFromOneOriginTheyCountAsOne() {
        Election.Result result = Election.elect(crowd(0, 50, true, 3)).orElseThrow();
        assertEquals(1, result.origins(), "a kind's settledness counts origins, so one flooding address never settles it");
    }

    @Test
    void outliersDoNotMoveAKernelsLatency() {
        assertEquals(1.0, Election.robustMedian(List.of(1.0, 1.01, 0.99, 1.02, 0.98, 500.0, 0.001)), 0.02);
        assertEquals(2.0, Election.robustMedian(List.of(2.0, 2.0, 2.0)), 1e-12);
    }
}
