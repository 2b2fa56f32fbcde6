package dev.jitzoo.zoo.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.Backend;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The election windows a zoo replica keeps in memory: read once per key, appended to, bounded. */
class ElectionWindowsTest {

    private static ZooKey key(String fingerprint) {
        return ZooKey.of(OpSpec.newBuilder().setKind(OpKind.OP_KIND_MATMUL).addShape(8).addShape(8).addShape(8).build(),
                Backend.BACKEND_WASM, DeviceProfile.newBuilder().setFingerprint(fingerprint).build());
    }

    private static ReportStore.SessionVotes session(String id, long atMs, String kernel, double ms) {
        return session(id, atMs, kernel, ms, null);
    }

    private static ReportStore.SessionVotes session(String id, long atMs, String kernel, double ms, ReportStore.Initial initial) {
        return fromOrigin("origin-" + id, id, atMs, kernel, ms, initial);
    }

    private static ReportStore.SessionVotes fromOrigin(String origin, String id, long atMs, String kernel, double ms, ReportStore.Initial initial) {
        return new ReportStore.SessionVotes(id, atMs,
                List.of(new Election.Vote(id, origin, 0, KernelRef.newBuilder().setKernelId(kernel).build(), ms)), initial);
    }

    @Test
    void speedupsAreTheMedianRatiosOfSessionsThatTimedBothKernels() {
        ElectionWindows.Window window = new ElectionWindows(4).windows(List.of(key("a")), cold -> Map.of()).get(key("a"));
        window.add(session("s1", 1, "k1", 1.0, new ReportStore.Initial("safe", 4.0, false)));
        window.add(session("s2", 2, "k1", 1.0, new ReportStore.Initial("safe", 6.0, false)));
        window.add(session("s3", 3, "k1", 1.0, new ReportStore.Initial("k1", 1.0, true))); // started from the zoo's k1
        window.add(session("s4", 4, "k2", 1.0, new ReportStore.Initial("safe", 50.0, false))); // never timed k1
        window.add(session("s5", 5, "k1", 2.0)); // timed no initial
        ReportStore.Speedups speedups = window.speedups("k1");
        assertEquals(4.0, speedups.vsInitial(), 1e-9, "median of 4, 6 and 1");
        assertEquals(5.0, speedups.vsSafeDefault(), 1e-9, "median of 4 and 6");
        assertTrue(Double.isNaN(window.speedups("k9").vsInitial()), "no session timed k9");
    }

    @Test
    void aKeyIsReadFromTheStoreOnceThenOnlyAppendedTo() {
        ElectionWindows windows = new ElectionWindows(16);
        List<List<ZooKey>> reads = new ArrayList<>();
        ZooKey a = key("a");
        ZooKey b = key("b");
        BestKernel storedBest = new BestKernel(KernelRef.newBuilder().setKernelId("k1").build(), 1.0, 1, 1);
        Map<ZooKey, ElectionWindows.Window> first = windows.windows(List.of(a, b), cold -> {
            reads.add(cold);
            return Map.of(a, new ReportStore.History(storedBest, List.of(session("s1", 1, "k1", 1.0))));
        });
        assertEquals(List.of(List.of(a, b)), reads, "both cold keys in one read");
        assertEquals(1, first.get(a).votes().size(), "the stored session is in a's window");
        assertTrue(first.get(b).votes().isEmpty(), "b was never elected: an empty window");
        assertFalse(first.get(a).elected("k1"), "the stored election is known: electing k1 again changes nothing");
        assertTrue(first.get(b).elected("k2"), "b's first election is a change");

        Map<ZooKey, ElectionWindows.Window> again = windows.windows(List.of(a), cold -> {
            reads.add(cold);
            return Map.of();
        });
        assertEquals(1, reads.size(), "a warm key is not read again");
        assertSame(first.get(a), again.get(a));

        windows.clear();
        windows.windows(List.of(a), cold -> {
            reads.add(cold);
            return Map.of();
        });
        assertEquals(2, reads.size(), "after the partitions moved, the key is read again");
    }

    @Test
    void aWindowHoldsEachSessionOnceAndOnlyTheLatestOrigins() {
        ElectionWindows windows = new ElectionWindows(16);
        ElectionWindows.Window window = windows.windows(List.of(key("a")), cold -> Map.of()).get(key("a"));
        window.add(session("s0", 10, "k0", 1.0));
        window.add(session("s0", 10, "k0", 1.0)); // a redelivered report
        assertEquals(1, window.votes().size());
        for (int i = 1; i <= Zoo.ELECTION_ORIGINS; i++) {
            window.add(session("s" + i, 10 + i, "k" + i % 3, 1.0));
        }
        assertEquals(Zoo.ELECTION_ORIGINS, window.origins());
        assertEquals(Zoo.ELECTION_ORIGINS, window.votes().size(), "the origin that reported longest ago left the window");
        assertTrue(window.votes().stream().noneMatch(v -> v.sessionId().equals("s0")));
        assertEquals(11, window.fromMs(), "the window starts at its oldest session's report");
        window.add(session("s0", 10, "k0", 1.0));
        assertTrue(window.votes().stream().anyMatch(v -> v.sessionId().equals("s0")), "a session that left may come back");
    }

    @Test
    void aFloodOfSessionsFromOneOriginPushesOutOnlyItsOwnOlderSessions() {
        ElectionWindows.Window window = new ElectionWindows(4).windows(List.of(key("a")), cold -> Map.of()).get(key("a"));
        for (int h = 0; h < 5; h++) {
            window.add(fromOrigin("honest-" + h, "h" + h, h, "kfast", 1.0, null));
        }
        for (int i = 0; i < 1000; i++) {
            window.add(fromOrigin("attacker", "f" + i, 100 + i, "kbad", 0.9, null));
        }
        assertEquals(6, window.origins(), "five honest origins and the attacker's");
        List<Election.Vote> votes = window.votes();
        assertEquals(5, votes.stream().filter(v -> v.origin().startsWith("honest")).count(), "every honest ballot is still counted");
        assertEquals(Zoo.SESSIONS_PER_ORIGIN, votes.stream().filter(v -> v.origin().equals("attacker")).count(),
                "the attacker's latest sessions only");
        assertEquals("kfast", Election.elect(votes).orElseThrow().kernel().getKernelId(), "one origin is one ballot");
        assertEquals(0, window.fromMs(), "the honest sessions are the oldest counted");
    }

    @Test
    void theLeastRecentlyUsedKeysAreEvictedPastTheBound() {
        ElectionWindows windows = new ElectionWindows(2);
        windows.windows(List.of(key("a"), key("b")), cold -> Map.of());
        windows.windows(List.of(key("a")), cold -> Map.of());
        windows.windows(List.of(key("c")), cold -> Map.of());
        assertEquals(2, windows.size());
        List<ZooKey> reread = new ArrayList<>();
        windows.windows(List.of(key("a"), key("b")), cold -> {
            reread.addAll(cold);
            return Map.of();
        });
        assertEquals(List.of(key("b")), reread, "b, the least recently used, was evicted; a was kept");
    }
}
