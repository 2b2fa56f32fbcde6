package dev.jitzoo.cli.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time: what each process has used, as the system keeps it for the process, and how busy the
 * whole machine was, every core and every process (/proc/stat).
 */
final class CpuSampler {

    private CpuSampler() {
    }

    /** CPU seconds a process has used so far; NaN where the system does not say. */
    static double seconds(ProcessHandle process) {
        return process.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
    }

    /** The JVM's JIT compiler threads, by name (/proc truncates it to 15 characters). */
    static final List<String> JIT_THREADS = List.of("C1 CompilerThre", "C2 CompilerThre");

    /** The kernel's clock ticks a second in /proc's CPU times (USER_HZ: 100 on Linux). */
    private static final double TICKS_PER_SECOND = 100;

    /**
     * CPU seconds so far of a process's threads whose name starts with one of {@code prefixes}
     * ("C2 CompilerThre": the JIT compiler's): only threads alive now count, so a JVM whose
     * compiler threads come and go under-counts; start it with
     * {@code -XX:-UseDynamicNumberOfCompilerThreads}. NaN where /proc does not say.
     */
    static double threadSeconds(ProcessHandle process, List<String> prefixes) {
        Path tasks = Path.of("/proc", String.valueOf(process.pid()), "task");
        long ticks = 0;
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
            for (Path thread : threads) {
                String stat;
                try {
                    stat = Files.readString(thread.resolve("stat"));
                } catch (IOException e) {
                    continue; // ended meanwhile
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                if (prefixes.stream().anyMatch(name::startsWith)) {
                    // after the name: state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt, cmajflt, utime, stime
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
        return ticks / TICKS_PER_SECOND;
    }

    /** A process's resident memory in bytes (VmRSS: heap, metaspace, code, thread stacks, direct buffers); -1 where the system does not say. */
    static long residentBytes(ProcessHandle process) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(process.pid()), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc here: said as -1
        }
        return -1;
    }

    /** CPU seconds so far of each process, by name; a process the system says nothing of is left out. */
    static Map<String, Double> seconds(Map<String, ProcessHandle> processes) {
        Map<String, Double> cpu = new LinkedHashMap<>();
        processes.forEach((name, h) -> h.info().totalCpuDuration().ifPresent(d -> cpu.put(name, d.toNanos() / 1e9)));
        return cpu;
    }

    /** The CPU seconds each process of {@code now} used since {@code before} (all of it where {@code before} has no reading). */
    static Map<String, Double> since(Map<String, Double> before, Map<String, Double> now) {
        Map<String, Double> used = new LinkedHashMap<>();
        now.forEach((name, seconds) -> used.put(name, seconds - before.getOrDefault(name, 0.0)));
        return used;
    }

    /** The machine's CPU ticks so far, busy and in all, over every core; zeros where there is no /proc/stat. */
    record Machine(long busy, long total) {

        static Machine now() {
            try {
                return parse(Files.readAllLines(Path.of("/proc/stat")).get(0));
            } catch (IOException | RuntimeException e) {
                return new Machine(0, 0);
            }
        }

        /** The first line of /proc/stat: user, nice, system, idle, iowait, irq, softirq, steal; idle and iowait are not busy. */
        static Machine parse(String cpuLine) {
            String[] f = cpuLine.trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new Machine(total - idle, total);
        }

        /** The share of the machine's CPU time that was busy since this reading; NaN where no tick passed. */
        double busySince() {
            return busyUntil(now());
        }

        double busyUntil(Machine later) {
            return later.total == total ? Double.NaN : (double) (later.busy - busy) / (later.total - total);
        }
    }
}
