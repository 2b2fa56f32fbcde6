package dev.jitzoo.zoo.infra;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.protobuf.InvalidProtocolBufferException;
import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.Election;
import dev.jitzoo.zoo.domain.ReportStore;
import dev.jitzoo.zoo.domain.SimilarKernels;
import dev.jitzoo.zoo.domain.TenantData;
import dev.jitzoo.zoo.domain.ZooKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.Binary;

/**
 * Reports in MongoDB: one document per session's report on a key, its ranked kernels in an array
 * (so a report is one write, and analytics unwind it), and one document per key for its elected
 * kernel. Uses only what MongoDB and its wire-compatible embedded stand-in both accept: no
 * transactions, no change streams, no partial indexes.
 */
public class MongoReportStore implements ReportStore {

    /** The collection of reports, one document per session and key. */
    public static final String REPORTS = "reports";
    /** The collection of elections, one document per zoo key. */
    public static final String BEST = "best";
    /**
     * The keys that have reports, one document per key (its name as {@code _id}): a key not in it
     * has none, and its reports are not looked for. Read by {@code _id}, which every store indexes;
     * a query on {@link #REPORTS}' key may scan the collection where the store indexes no more
     * (the embedded stand-in), once per key a replica starts to hold.
     */
    public static final String REPORT_KEYS = "reportKeys";
    /** The document of {@link #REPORT_KEYS} kept once the keys of reports stored before it were entered (a key's name holds '|'). */
    private static final String ENTERED_BEFORE = "entered-before";

    private final MongoCollection<Document> reports;
    private final MongoCollection<Document> best;
    private final MongoCollection<Document> microbench;
    private final MongoCollection<Document> peaks;
    private final MongoCollection<Document> reportKeys;
    /** Keys this replica knows {@link #REPORT_KEYS} holds: not written again. */
    private final Cache<String, Boolean> entered = Caffeine.newBuilder().maximumSize(100_000).build();

    public MongoReportStore(MongoDatabase database) {
        this.reports = database.getCollection(REPORTS);
        this.best = database.getCollection(BEST);
        this.microbench = database.getCollection("microbench");
        microbench.createIndex(Indexes.ascending("sessionId", "primitive"), new IndexOptions().unique(true));
        this.peaks = database.getCollection("peaks"); // one document per device kind and origin: its latest peak
        peaks.createIndex(Indexes.ascending("fingerprint"));
        reports.createIndex(Indexes.ascending("key", "sessionId"), new IndexOptions().unique(true));
        reports.createIndex(Indexes.ascending("fingerprint"));
        reports.createIndex(Indexes.ascending("opKey"));
        reports.createIndex(Indexes.descending("key", "receivedAtMs"));
        this.reportKeys = database.getCollection(REPORT_KEYS);
        enterKeysStoredBefore();
    }

    /**
     * Enters the keys of the reports stored before {@link #REPORT_KEYS} was kept, in one pass over
     * the reports, once per database (a replica that finds it done skips it; two at once enter the
     * same keys, once each).
     */
    private void enterKeysStoredBefore() {
        if (reportKeys.find(Filters.eq("_id", ENTERED_BEFORE)).first() != null) {
            return;
        }
        List<Document> keys = new ArrayList<>();
        for (Document key : reports.aggregate(List.of(Aggregates.group("$key")))) {
            keys.add(key);
            if (keys.size() == 10_000) {
                insertOnce(reportKeys, keys);
                keys.clear();
            }
        }
        keys.add(new Document("_id", ENTERED_BEFORE));
        insertOnce(reportKeys, keys);
    }

    /** Stores reports, their keys entered in {@link #REPORT_KEYS} first: a key with a report always is. */
    @Override
    public void addReports(List<StoredReport> batch) {
        if (batch.isEmpty()) {
            return;
        }
        List<String> newKeys = batch.stream().map(r -> r.key().asString()).distinct().filter(k -> entered.getIfPresent(k) == null).toList();
        if (!newKeys.isEmpty()) {
            insertOnce(reportKeys, newKeys.stream().map(k -> new Document("_id", k)).toList());
            newKeys.forEach(k -> entered.put(k, true));
        }
        insertOnce(reports, batch.stream().map(MongoReportStore::toDocument).toList());
    }

    /** Inserts documents; those a unique index already holds (a redelivered record's) are skipped. */
    private static void insertOnce(MongoCollection<Document> collection, List<Document> docs) {
        try {
            collection.insertMany(docs, new InsertManyOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            boolean onlyDuplicates = e.getWriteErrors().stream()
                    .allMatch(w -> ErrorCategory.fromErrorCode(w.getCode()) == ErrorCategory.DUPLICATE_KEY);
            if (!onlyDuplicates) {
                throw e;
            }
        }
    }

    @Override
    public void addMicrobench(List<PrimitiveTiming> timings) {
        insertOnce(microbench, timings.stream().map(t -> new Document("fingerprint", t.fingerprint())
                .append("sessionId", t.sessionId())
                .append("primitive", t.primitive().name())
                .append("logSpeedup", Math.log(t.speedup()))
                .append("engine", t.engine())
                .append("receivedAtMs", t.receivedAtMs())).toList());
    }

    @Override
    public List<DevicePrimitive> primitives() {
        List<DevicePrimitive> out = new ArrayList<>();
        microbench.aggregate(List.of(
                Aggregates.sort(Sorts.ascending("receivedAtMs")),
                Aggregates.group(new Document("fingerprint", "$fingerprint").append("primitive", "$primitive"),
                        Accumulators.avg("meanLog", "$logSpeedup"),
                        Accumulators.sum("reports", 1),
                        Accumulators.last("engine", "$engine")),
                Aggregates.sort(Sorts.ascending("_id.fingerprint", "_id.primitive")))).forEach(doc -> {
            Document id = doc.get("_id", Document.class);
            out.add(new DevicePrimitive(id.getString("fingerprint"), Primitive.valueOf(id.getString("primitive")),
                    Math.exp(doc.getDouble("meanLog")), doc.getInteger("reports"), doc.getString("engine")));
        });
        return out;
    }

    @Override
    public void savePeak(OriginPeak peak) {
        // replaced only by a newer one: a redelivered or late older record finds the newer document,
        // cannot match it, tries to insert its _id again and is refused as a duplicate
        try {
            peaks.updateOne(Filters.and(Filters.eq("_id", peak.fingerprint() + "|" + peak.origin()),
                            Filters.lt("receivedAtMs", peak.receivedAtMs())),
                    Updates.combine(Updates.set("fingerprint", peak.fingerprint()), Updates.set("origin", peak.origin()),
                            Updates.set("gflops", peak.gflops()), Updates.set("receivedAtMs", peak.receivedAtMs())),
                    new UpdateOptions().upsert(true));
        } catch (MongoWriteException e) {
            if (e.getError().getCategory() != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
        }
    }

    @Override
    public Map<String, List<Double>> originPeaks(Collection<String> fingerprints) {
        Map<String, List<Double>> out = new HashMap<>();
        peaks.find(Filters.in("fingerprint", fingerprints)).projection(Projections.include("fingerprint", "gflops"))
                .forEach(d -> out.computeIfAbsent(d.getString("fingerprint"), fp -> new ArrayList<>()).add(d.getDouble("gflops")));
        return out;
    }

    @Override
    public Map<ZooKey, History> histories(Collection<ZooKey> keys, int origins, int sessionsPerOrigin) {
        Map<String, ZooKey> wanted = new LinkedHashMap<>();
        keys.forEach(k -> wanted.put(k.asString(), k));
        Map<String, Document> elected = new HashMap<>();
        best.find(Filters.in("_id", wanted.keySet())).forEach(d -> elected.put(d.getString("_id"), d));
        Set<String> stored = new HashSet<>(elected.keySet());
        reportKeys.find(Filters.in("_id", wanted.keySet())).forEach(d -> stored.add(d.getString("_id")));
        stored.forEach(k -> entered.put(k, true));
        // of the keys that have reports: an elected key's since the oldest its election counted; a key not elected yet (too
        // few origins), all of them; newest first, each origin's latest kept (a report stored by a batch not acknowledged
        // comes again, and counts once)
        List<Bson> since = wanted.keySet().stream().filter(stored::contains).map(name -> elected.containsKey(name)
                ? Filters.and(Filters.eq("key", name), Filters.gte("receivedAtMs", number(elected.get(name), "windowFromMs")))
                : Filters.eq("key", name)).toList();
        Map<String, List<SessionVotes>> latest = new HashMap<>();
        Map<String, Map<String, Integer>> perOrigin = new HashMap<>();
        if (!since.isEmpty()) {
            reports.find(since.size() == 1 ? since.get(0) : Filters.or(since))
                    .sort(Sorts.descending("key", "receivedAtMs", "sessionId"))
                    .projection(Projections.include("key", "sessionId", "origin", "tenant", "receivedAtMs", "ranked.ref",
                            "ranked.medianMs", "initial"))
                    .forEach(doc -> {
                        String key = doc.getString("key");
                        Map<String, Integer> seen = perOrigin.computeIfAbsent(key, k -> new HashMap<>());
                        String origin = doc.getString("origin");
                        int count = seen.getOrDefault(origin, 0);
                        if (count < sessionsPerOrigin && (count > 0 || seen.size() < origins)) {
                            seen.put(origin, count + 1);
                            latest.computeIfAbsent(key, k -> new ArrayList<>()).add(sessionVotes(doc));
                        }
                    });
        }
        Map<ZooKey, History> out = new LinkedHashMap<>();
        wanted.forEach((name, key) -> {
            List<SessionVotes> oldestFirst = new ArrayList<>(latest.getOrDefault(name, List.of()));
            if (oldestFirst.isEmpty() && !elected.containsKey(name)) {
                return;
            }
            Collections.reverse(oldestFirst);
            Document doc = elected.get(name);
            out.put(key, new History(doc == null ? null : toBest(doc), oldestFirst));
        });
        return out;
    }

    private static SessionVotes sessionVotes(Document doc) {
        String session = doc.getString("sessionId");
        List<Document> ranked = doc.getList("ranked", Document.class);
        List<Election.Vote> votes = new ArrayList<>(ranked.size());
        String tenant = TenantData.name(doc.getString("tenant")); // reports stored before tenants were the public tenant's
        for (int rank = 0; rank < ranked.size(); rank++) {
            Document timed = ranked.get(rank);
            votes.add(new Election.Vote(session, doc.getString("origin"), rank, parseRef(timed.get("ref", Binary.class)),
                    timed.getDouble("medianMs"), tenant));
        }
        Document initial = doc.get("initial", Document.class);
        return new SessionVotes(session, number(doc, "receivedAtMs"), votes, initial == null ? null
                : new Initial(initial.getString("kernelId"), initial.getDouble("medianMs"), initial.getBoolean("fromZoo", false)));
    }

    /** A stored whole number (MongoDB keeps small ones as int, large ones as long), 0 when absent. */
    static long number(Document d, String field) {
        return d.get(field) instanceof Number n ? n.longValue() : 0;
    }

    @Override
    public void saveBests(Map<ZooKey, Elected> bests) {
        if (bests.isEmpty()) {
            return;
        }
        best.bulkWrite(bests.entrySet().stream().map(e -> new ReplaceOneModel<>(Filters.eq("_id", e.getKey().asString()),
                toDocument(e.getKey(), e.getValue()), new ReplaceOptions().upsert(true))).toList(),
                new BulkWriteOptions().ordered(false));
    }

    private static Document toDocument(ZooKey key, Elected elected) {
        BestKernel kernel = elected.best();
        return new Document("_id", key.asString())
                .append("fingerprint", key.fingerprint())
                .append("opKey", key.opKey())
                .append("kernelId", kernel.kernel().getKernelId())
                .append("ref", new Binary(kernel.kernel().toByteArray()))
                .append("medianMs", kernel.medianMs())
                .append("reports", kernel.reports())
                .append("origins", kernel.origins())
                .append("windowFromMs", elected.windowFromMs())
                .append("speedupVsInitial", finiteOrNull(elected.speedups().vsInitial()))
                .append("speedupVsSafeDefault", finiteOrNull(elected.speedups().vsSafeDefault()));
    }

    private static Double finiteOrNull(double x) {
        return Double.isFinite(x) ? x : null;
    }

    @Override
    public Optional<BestKernel> findBest(ZooKey key) {
        return Optional.ofNullable(best.find(Filters.eq("_id", key.asString())).first()).map(MongoReportStore::toBest);
    }

    private static BestKernel toBest(Document doc) {
        return new BestKernel(parseRef(doc.get("ref", Binary.class)),
                doc.getDouble("medianMs"), doc.getInteger("reports"), doc.getInteger("origins", doc.getInteger("reports")));
    }

    @Override
    public long countMeasurements(String fingerprint) {
        Document total = reports.aggregate(List.of(
                Aggregates.match(Filters.eq("fingerprint", fingerprint)),
                Aggregates.group(null, Accumulators.sum("measurements", new Document("$size", "$ranked"))))).first();
        return total == null ? 0 : ((Number) total.get("measurements")).longValue();
    }

    @Override
    public List<SimilarKernels.KindTiming> timings(String opKey) {
        List<SimilarKernels.KindTiming> out = new ArrayList<>();
        reports.aggregate(List.of(
                Aggregates.match(Filters.eq("opKey", opKey)),
                Aggregates.unwind("$ranked"),
                Aggregates.group(new Document("key", "$key").append("kernelId", "$ranked.kernelId"),
                        Accumulators.avg("meanMs", "$ranked.medianMs"),
                        Accumulators.sum("reports", 1),
                        Accumulators.first("ref", "$ranked.ref"),
                        Accumulators.last("device", "$device")))).forEach(doc ->
                out.add(new SimilarKernels.KindTiming(doc.get("_id", Document.class).getString("key"),
                        parseDevice(doc.get("device", Binary.class)), parseRef(doc.get("ref", Binary.class)),
                        doc.getDouble("meanMs"), doc.getInteger("reports"))));
        return out;
    }

    private static Document toDocument(StoredReport r) {
        return new Document("key", r.key().asString())
                .append("opKey", r.key().opKey())
                .append("fingerprint", r.key().fingerprint())
                .append("device", new Binary(r.device().toByteArray()))
                .append("sessionId", r.sessionId())
                .append("origin", r.origin())
                .append("tenant", r.tenant())
                .append("receivedAtMs", r.receivedAtMs())
                .append("initial", r.initial() == null ? null : new Document("kernelId", r.initial().kernelId())
                        .append("medianMs", r.initial().medianMs()).append("fromZoo", r.initial().fromZoo()))
                .append("ranked", r.ranked().stream().map(t -> new Document("kernelId", t.kernel().getKernelId())
                        .append("ref", new Binary(t.kernel().toByteArray()))
                        .append("medianMs", t.medianMs())
                        .append("samples", t.samples())).toList());
    }

    private static DeviceProfile parseDevice(Binary binary) {
        try {
            return DeviceProfile.parseFrom(binary.getData());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("stored device profile is corrupt", e);
        }
    }

    private static KernelRef parseRef(Binary binary) {
        try {
            return KernelRef.parseFrom(binary.getData());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("stored kernel reference is corrupt", e);
        }
    }
}
