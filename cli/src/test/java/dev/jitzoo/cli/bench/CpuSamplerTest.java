package dev.jitzoo.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** CPU time read from the system: a busy thread shows, an ended process says nothing, the machine's ticks add up. */
class CpuSamplerTest {

    @Test
    void aBusyThreadsCpuTimeShowsInItsProcess() throws Exception {
        double before = CpuSampler.seconds(ProcessHandle.current());
        Map<String, Double> named = CpuSampler.seconds(Map.of("load", ProcessHandle.current()));
        CpuSampler.Machine machine = CpuSampler.Machine.now();
        Thread busy = new Thread(() -> {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
            long spin = 0;
            while (System.nanoTime() < until) {
                spin++;
            }
            if (spin == 42) {
                System.out.print("");
            }
        });
        busy.start();
        busy.join();
        double used = CpuSampler.seconds(ProcessHandle.current()) - before;
        assertTrue(used > 0.1, "CPU seconds used: " + used);
        double since = CpuSampler.since(named, CpuSampler.seconds(Map.of("load", ProcessHandle.current()))).get("load");
        assertTrue(since > 0.1, "CPU seconds since: " + since);
        double share = machine.busySince();
        assertTrue(share > 0 && share <= 1, "machine busy: " + share);
    }

    @Test
    void aProcesssResidentMemoryIsAtLeastWhatItHolds() {
        byte[] held = new byte[64 << 20];
        java.util.Arrays.fill(held, (byte) 1); // touched: resident, not only reserved
        long resident = CpuSampler.residentBytes(ProcessHandle.current());
        assertTrue(resident > held.length, "resident bytes: " + resident);
        assertEquals(1, held[held.length - 1], "held until measured");
    }

    @Test
    void anEndedProcessSaysNothing() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        assertTrue(Double.isNaN(CpuSampler.seconds(gone.toHandle())));
        assertEquals(Map.of(), CpuSampler.seconds(Map.of("gone", gone.toHandle())));
        assertEquals(-1, CpuSampler.residentBytes(gone.toHandle()));
    }

    @Test
    void cpuSinceCountsANewProcessWhole() {
        assertEquals(Map.of("zoo", 1.5, "zoo-2", 0.75), CpuSampler.since(Map.of("zoo", 2.0), Map.of("zoo", 3.5, "zoo-2", 0.75)));
    }

    @Test
    void theMachinesTicksLeaveOutIdleAndIowait() {
        CpuSampler.Machine before = CpuSampler.Machine.parse("cpu  100 0 50 800 50 0 0 0 0 0");
        assertEquals(new CpuSampler.Machine(150, 1000), before);
        CpuSampler.Machine after = CpuSampler.Machine.parse("cpu  130 0 70 850 50 0 0 0 0 0");
        assertEquals(0.5, before.busyUntil(after), 1e-12, "50 of 100 ticks busy");
        assertTrue(Double.isNaN(before.busyUntil(before)), "no tick passed");
    }
}
