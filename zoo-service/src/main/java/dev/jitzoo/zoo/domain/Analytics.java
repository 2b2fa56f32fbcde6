package dev.jitzoo.zoo.domain;

import java.util.List;
import java.util.function.Consumer;

/** What analysts of the kernel zoo ask of its records, answered by the store's aggregation pipelines. */
public interface Analytics {

    /** A device kind: how many sessions, network origins and ops reported, and when. */
    record Kind(String fingerprint, int sessions, int origins, int ops, long firstMs, long lastMs) {
    }

    /**
     * A key's election, as it stands, with the elected kernel's speedup over the kernel sessions
     * started with and over the space's safe default (null: no session timed both).
     */
    record Election(String key, String op, String backend, String kernelId, double medianMs, int reports, int origins,
                    Double speedupVsInitial, Double speedupVsSafeDefault) {
    }

    /** An op's coverage across the fleet: the device kinds with an elected kernel, and those settled. */
    record Coverage(String opKey, int kinds, int settled) {
    }

    /** Reports in one time bucket. */
    record Volume(long fromMs, int sessions, int measurements) {
    }

    /** How often a kernel was ranked first by the sessions that ranked it. */
    record WinRate(String kernelId, int ranked, int first, double rate) {
    }

    /** One stored measurement, for exports. */
    record Row(String fingerprint, String key, String sessionId, String origin, int rank, String kernelId, double medianMs,
               int samples, long receivedAtMs) {
    }

    /** Device kinds, most sessions first, at most {@code limit}. */
    List<Kind> kinds(int limit);

    /** The elections of one device kind's keys. */
    List<Election> elections(String fingerprint);

    /** Every op's coverage: kinds with an elected kernel, and those ranked by at least {@code settledOrigins} origins. */
    List<Coverage> coverage(int settledOrigins);

    /** Reports since {@code fromMs}, in buckets of {@code bucketMs}, oldest first. */
    List<Volume> volume(long fromMs, long bucketMs);

    /** Each kernel's win rate on one op (its {@link ZooKey#opKey()}), most ranked first. */
    List<WinRate> winRates(String opKey);

    /** Every measurement (of one device kind, unless null), oldest first, to {@code sink}. */
    void export(String fingerprint, Consumer<Row> sink);
}
