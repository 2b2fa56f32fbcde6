package dev.jitzoo.zoo.infra;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import dev.jitzoo.zoo.domain.Analytics;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * The analytics as MongoDB aggregation pipelines over the reports (one document per session and
 * key, its ranked kernels in an array) and the elections. Each is a {@link Plan} that opens with a
 * {@code $match} or {@code $sort} on an indexed field (fingerprint, receivedAtMs, opKey), so MongoDB
 * reads it through that index ({@code AnalyticsPlansTest} checks each against the server's indexes,
 * and with a real MongoDB against its {@code explain}).
 */
public class MongoAnalytics implements Analytics {

    /** One analytics query as MongoDB runs it: the collection it reads and its pipeline. */
    record Plan(String collection, List<Bson> stages) {
    }

    private final MongoDatabase database;

    public MongoAnalytics(MongoDatabase database) {
        this.database = database;
        MongoCollection<Document> reports = database.getCollection(MongoReportStore.REPORTS);
        MongoCollection<Document> best = database.getCollection(MongoReportStore.BEST);
        reports.createIndex(Indexes.ascending("receivedAtMs"));
        best.createIndex(Indexes.ascending("fingerprint"));
        best.createIndex(Indexes.ascending("opKey"));
    }

    private Iterable<Document> run(Plan plan) {
        return database.getCollection(plan.collection()).aggregate(plan.stages());
    }

    /** The reports grouped by device kind, read in fingerprint order. */
    static Plan kindsPlan() {
        return new Plan(MongoReportStore.REPORTS, List.of(
                Aggregates.sort(Sorts.ascending("fingerprint")),
                Aggregates.group("$fingerprint", Accumulators.addToSet("sessions", "$sessionId"),
                        Accumulators.addToSet("origins", "$origin"), Accumulators.addToSet("keys", "$key"),
                        Accumulators.min("firstMs", "$receivedAtMs"), Accumulators.max("lastMs", "$receivedAtMs"))));
    }

    static Plan electionsPlan(String fingerprint) {
        return new Plan(MongoReportStore.BEST, List.of(
                Aggregates.match(Filters.eq("fingerprint", fingerprint)),
                Aggregates.sort(Sorts.ascending("_id"))));
    }

    static Plan coveragePlan(int settledOrigins) {
        Document settled = new Document("$cond", List.of(new Document("$gte", List.of("$origins", settledOrigins)), 1, 0));
        return new Plan(MongoReportStore.BEST, List.of(
                Aggregates.sort(Sorts.ascending("opKey")),
                Aggregates.group("$opKey", Accumulators.sum("kinds", 1), Accumulators.sum("settled", settled)),
                Aggregates.sort(Sorts.ascending("_id"))));
    }

    static Plan volumePlan(long fromMs, long bucketMs) {
        Document bucket = new Document("$subtract", List.of("$receivedAtMs", new Document("$mod", List.of("$receivedAtMs", bucketMs))));
        return new Plan(MongoReportStore.REPORTS, List.of(
                Aggregates.match(Filters.gte("receivedAtMs", fromMs)),
                Aggregates.group(bucket, Accumulators.addToSet("sessions", "$sessionId"),
                        Accumulators.sum("measurements", new Document("$size", "$ranked"))),
                Aggregates.sort(Sorts.ascending("_id"))));
    }

    static Plan winRatePlan(String opKey) {
        Document first = new Document("$cond", List.of(new Document("$eq", List.of("$kernel", "$first")), 1, 0));
        return new Plan(MongoReportStore.REPORTS, List.of(
                Aggregates.match(Filters.eq("opKey", opKey)),
                Aggregates.project(new Document("kernel", "$ranked.kernelId")
                        .append("first", new Document("$arrayElemAt", List.of("$ranked.kernelId", 0)))),
                Aggregates.unwind("$kernel"),
                Aggregates.group("$kernel", Accumulators.sum("ranked", 1), Accumulators.sum("first", first)),
                Aggregates.sort(Sorts.orderBy(Sorts.descending("ranked"), Sorts.ascending("_id")))));
    }

    /** Every report (of one device kind, unless null), oldest first. */
    static Plan exportPlan(String fingerprint) {
        List<Bson> stages = new ArrayList<>();
        if (fingerprint != null) {
            stages.add(Aggregates.match(Filters.eq("fingerprint", fingerprint)));
        }
        stages.add(Aggregates.sort(Sorts.ascending("receivedAtMs", "sessionId")));
        stages.add(Aggregates.project(Projections.exclude("ranked.ref", "device")));
        return new Plan(MongoReportStore.REPORTS, stages);
    }

    /** Every plan, with sample arguments: what the plans test checks. */
    static List<Plan> plans() {
        return List.of(kindsPlan(), electionsPlan("fp"), coveragePlan(3), volumePlan(0, 3_600_000), winRatePlan("op|wasm"),
                exportPlan("fp"), exportPlan(null));
    }

    @Override
    public List<Kind> kinds(int limit) {
        List<Kind> kinds = new ArrayList<>();
        run(kindsPlan()).forEach(d ->
                kinds.add(new Kind(d.getString("_id"), d.getList("sessions", Object.class).size(),
                        d.getList("origins", Object.class).size(), d.getList("keys", Object.class).size(),
                        MongoReportStore.number(d, "firstMs"), MongoReportStore.number(d, "lastMs"))));
        kinds.sort((a, b) -> a.sessions() != b.sessions() ? Integer.compare(b.sessions(), a.sessions())
                : a.fingerprint().compareTo(b.fingerprint()));
        return kinds.subList(0, Math.min(limit, kinds.size()));
    }

    @Override
    public List<Election> elections(String fingerprint) {
        List<Election> out = new ArrayList<>();
        run(electionsPlan(fingerprint)).forEach(d -> {
            String opKey = d.getString("opKey"); // op|backend; elections saved before it was kept lack it
            int cut = opKey == null ? -1 : opKey.lastIndexOf('|');
            out.add(new Election(d.getString("_id"), cut < 0 ? "" : opKey.substring(0, cut), cut < 0 ? "" : opKey.substring(cut + 1),
                    d.getString("kernelId"), d.getDouble("medianMs"), d.getInteger("reports"),
                    d.getInteger("origins", d.getInteger("reports")), d.getDouble("speedupVsInitial"), d.getDouble("speedupVsSafeDefault")));
        });
        return out;
    }

    @Override
    public List<Coverage> coverage(int settledOrigins) {
        List<Coverage> out = new ArrayList<>();
        run(coveragePlan(settledOrigins)).forEach(d -> {
            if (d.getString("_id") != null) { // elections saved before they carried their op key
                out.add(new Coverage(d.getString("_id"), d.getInteger("kinds"), d.getInteger("settled")));
            }
        });
        return out;
    }

    @Override
    public List<Volume> volume(long fromMs, long bucketMs) {
        List<Volume> out = new ArrayList<>();
        run(volumePlan(fromMs, bucketMs)).forEach(d -> out.add(new Volume(MongoReportStore.number(d, "_id"),
                d.getList("sessions", Object.class).size(), d.getInteger("measurements"))));
        return out;
    }

    @Override
    public List<WinRate> winRates(String opKey) {
        List<WinRate> out = new ArrayList<>();
        run(winRatePlan(opKey)).forEach(d -> {
            int ranked = d.getInteger("ranked");
            int first = d.getInteger("first");
            out.add(new WinRate(d.getString("_id"), ranked, first, (double) first / ranked));
        });
        return out;
    }

    @Override
    public void export(String fingerprint, Consumer<Row> sink) {
        run(exportPlan(fingerprint)).forEach(d -> {
                    List<Document> ranked = d.getList("ranked", Document.class);
                    for (int rank = 0; rank < ranked.size(); rank++) {
                        Document t = ranked.get(rank);
                        sink.accept(new Row(d.getString("fingerprint"), d.getString("key"), d.getString("sessionId"),
                                d.getString("origin"), rank, t.getString("kernelId"), t.getDouble("medianMs"),
                                t.getInteger("samples", 0), MongoReportStore.number(d, "receivedAtMs")));
                    }
                });
    }
}
