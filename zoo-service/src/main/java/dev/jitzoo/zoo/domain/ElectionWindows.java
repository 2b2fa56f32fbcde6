package dev.jitzoo.zoo.domain;

import dev.jitzoo.proto.kernel.v1.KernelRef;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Each zoo key's election window kept in memory as reports arrive: the latest sessions of each of
 * its latest {@link Zoo#ELECTION_ORIGINS} network origins (at most {@link Zoo#SESSIONS_PER_ORIGIN}
 * each) and the kernel it last elected. The window counts origins, not sessions, so a flood of
 * sessions from one address pushes out only that address's older sessions, never another
 * origin's ballot. A key is read from the store once, when it is first touched (or again after it
 * was evicted or after {@link #clear()}), the keys a batch touches together in one read; then it is
 * only appended to: an election never reads the key's history again.
 *
 * <p>Reports of one device kind reach one consumer (they are keyed by its fingerprint), so the
 * window in that consumer's memory is the key's; when partitions move between replicas the
 * windows are cleared and read again. At most {@code maxKeys} windows are kept, the least
 * recently used evicted.
 */
public final class ElectionWindows {

    /** One key's window. */
    static final class Window {
        /** Each origin's latest sessions, oldest first; the origin that reported last is last. */
        private final LinkedHashMap<String, ArrayDeque<ReportStore.SessionVotes>> origins = new LinkedHashMap<>();
        private final Set<String> sessionIds = new HashSet<>();
        /** One reference object per kernel, shared by all its votes. */
        private final Map<String, KernelRef> refs = new HashMap<>();
        private String elected;

        /**
         * Adds one session's votes unless the window holds that session already: its origin becomes
         * the latest, keeping its latest sessions; the origin that reported longest ago leaves past
         * the window.
         */
        void add(ReportStore.SessionVotes session) {
            if (session.votes().isEmpty() || !sessionIds.add(session.sessionId())) {
                return;
            }
            String origin = session.votes().get(0).origin();
            ArrayDeque<ReportStore.SessionVotes> latest = origins.remove(origin); // put back last: the latest origin
            if (latest == null) {
                latest = new ArrayDeque<>();
            }
            latest.addLast(new ReportStore.SessionVotes(session.sessionId(), session.receivedAtMs(),
                    session.votes().stream().map(v -> new Election.Vote(v.sessionId(), v.origin(), v.rank(),
                            refs.computeIfAbsent(v.kernel().getKernelId(), id -> v.kernel()), v.medianMs(), v.tenant())).toList(),
                    session.initial()));
            while (latest.size() > Zoo.SESSIONS_PER_ORIGIN) {
                sessionIds.remove(latest.removeFirst().sessionId());
            }
            origins.put(origin, latest);
            while (origins.size() > Zoo.ELECTION_ORIGINS) {
                Map.Entry<String, ArrayDeque<ReportStore.SessionVotes>> eldest = origins.entrySet().iterator().next();
                eldest.getValue().forEach(s -> sessionIds.remove(s.sessionId()));
                origins.remove(eldest.getKey());
            }
        }

        List<Election.Vote> votes() {
            List<Election.Vote> all = new ArrayList<>(sessionIds.size() * Election.TOP_N);
            sessions().forEach(s -> all.addAll(s.votes()));
            return all;
        }

        /** The network origins the window holds. */
        int origins() {
            return origins.size();
        }

        private Stream<ReportStore.SessionVotes> sessions() {
            return origins.values().stream().flatMap(ArrayDeque::stream);
        }

        /**
         * The elected kernel's speedup over each session's initial kernel, as that session timed
         * both: the median ratio over all such sessions, and over those that started from the
         * space's safe default (not from the zoo).
         */
        ReportStore.Speedups speedups(String kernelId) {
            List<Double> all = new ArrayList<>();
            List<Double> fromSafeDefault = new ArrayList<>();
            sessions().forEach(s -> {
                if (s.initial() == null) {
                    return;
                }
                for (Election.Vote v : s.votes()) {
                    if (v.kernel().getKernelId().equals(kernelId)) {
                        double ratio = s.initial().medianMs() / v.medianMs();
                        all.add(ratio);
                        if (!s.initial().fromZoo()) {
                            fromSafeDefault.add(ratio);
                        }
                    }
                }
            });
            return new ReportStore.Speedups(medianOrNaN(all), medianOrNaN(fromSafeDefault));
        }

        private static double medianOrNaN(List<Double> xs) {
            return xs.isEmpty() ? Double.NaN : Election.median(xs.stream().mapToDouble(Double::doubleValue).toArray());
        }

        /** When the oldest report the window counts arrived. */
        long fromMs() {
            return sessions().mapToLong(ReportStore.SessionVotes::receivedAtMs).min().orElse(0);
        }

        /** Records the kernel now elected; says whether it differs from the one before. */
        boolean elected(String kernelId) {
            boolean changed = !kernelId.equals(elected);
            elected = kernelId;
            return changed;
        }
    }

    private final int maxKeys;
    private final Map<ZooKey, Window> windows;
    private volatile int size;

    public ElectionWindows(int maxKeys) {
        this.maxKeys = maxKeys;
        this.windows = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<ZooKey, Window> eldest) {
                return size() > ElectionWindows.this.maxKeys;
            }
        };
    }

    /** The keys' windows; those not in memory are read at once with {@code read}. */
    synchronized Map<ZooKey, Window> windows(Collection<ZooKey> keys, Function<List<ZooKey>, Map<ZooKey, ReportStore.History>> read) {
        Map<ZooKey, Window> out = new LinkedHashMap<>();
        List<ZooKey> missing = new ArrayList<>();
        for (ZooKey key : keys) {
            Window window = windows.get(key);
            if (window == null) {
                missing.add(key);
            } else {
                out.put(key, window);
            }
        }
        Map<ZooKey, ReportStore.History> stored = missing.isEmpty() ? Map.of() : read.apply(missing);
        for (ZooKey key : missing) {
            Window window = new Window();
            ReportStore.History history = stored.get(key);
            if (history != null) {
                history.sessions().forEach(window::add);
                window.elected = history.best() == null ? null : history.best().kernel().getKernelId();
            }
            windows.put(key, window);
            out.put(key, window);
        }
        size = windows.size();
        return out;
    }

    /** Forgets every window (this replica's partitions changed). */
    public synchronized void clear() {
        windows.clear();
        size = 0;
    }

    /** How many keys' windows are in memory. */
    public int size() {
        return size;
    }
}
