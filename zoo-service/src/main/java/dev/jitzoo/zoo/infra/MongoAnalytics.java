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
 * key, its ranked kernels in an array) and the elections. Each pipeline that filters starts with a
 * {@code $match} on an indexed field (fingerprint, receivedAtMs, opKey), so it reads only what it
 * reports on.
 */
public class MongoAnalytics implements Analytics {

    private final MongoCollection<Document> reports;
    private final MongoCollection<Document> best;

    public MongoAnalytics(MongoDatabase database) {
        this.reports = database.getCollection(MongoReportStore.REPORTS);
        this.best = database.getCollection("best");
        reports.createIndex(Indexes.ascending("receivedAtMs"));
        best.createIndex(Indexes.ascending("fingerprint"));
        best.createIndex(Indexes.ascending("opKey"));
    }

    private static List<Bson> volumePipeline(long fromMs, long bucketMs) {
        Document bucket = new Document("$subtract", List.of("$receivedAtMs", new Document("$mod", List.of("$receivedAtMs", bucketMs))));
        return List.of(
                Aggregates.match(Filters.gte("receivedAtMs", fromMs)),
                Aggregates.group(bucket, Accumulators.addToSet("sessions", "$sessionId"),
                        Accumulators.sum("measurements", new Document("$size", "$ranked"))),
                Aggregates.sort(Sorts.ascending("_id")));
    }

    private static List<Bson> winRatePipeline(String opKey) {
        Document first = new Document("$cond", List.of(new Document("$eq", List.of("$kernel", "$first")), 1, 0));
        return List.of(
                Aggregates.match(Filters.eq("opKey", opKey)),
                Aggregates.project(new Document("kernel", "$ranked.kernelId")
                        .append("first", new Document("$arrayElemAt", List.of("$ranked.kernelId", 0)))),
                Aggregates.unwind("$kernel"),
                Aggregates.group("$kernel", Accumulators.sum("ranked", 1), Accumulators.sum("first", first)),
                Aggregates.sort(Sorts.orderBy(Sorts.descending("ranked"), Sorts.ascending("_id"))));
    }

    @Override
    public List<Kind> kinds(int limit) {
        List<Kind> kinds = new ArrayList<>();
        reports.aggregate(List.of(
                Aggregates.group("$fingerprint", Accumulators.addToSet("sessions", "$sessionId"),
                        Accumulators.addToSet("origins", "$origin"), Accumulators.addToSet("keys", "$key"),
                        Accumulators.min("firstMs", "$receivedAtMs"), Accumulators.max("lastMs", "$receivedAtMs")))).forEach(d ->
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
        best.find(Filters.eq("fingerprint", fingerprint)).sort(Sorts.ascending("_id")).forEach(d -> {
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
        Document settled = new Document("$cond", List.of(new Document("$gte", List.of("$origins", settledOrigins)), 1, 0));
        List<Coverage> out = new ArrayList<>();
        best.aggregate(List.of(
                Aggregates.group("$opKey", Accumulators.sum("kinds", 1), Accumulators.sum("settled", settled)),
                Aggregates.sort(Sorts.ascending("_id")))).forEach(d -> {
            if (d.getString("_id") != null) { // elections saved before they carried their op key
                out.add(new Coverage(d.getString("_id"), d.getInteger("kinds"), d.getInteger("settled")));
            }
        });
        return out;
    }

    @Override
    public List<Volume> volume(long fromMs, long bucketMs) {
        List<Volume> out = new ArrayList<>();
        reports.aggregate(volumePipeline(fromMs, bucketMs)).forEach(d -> out.add(new Volume(MongoReportStore.number(d, "_id"),
                d.getList("sessions", Object.class).size(), d.getInteger("measurements"))));
        return out;
    }

    @Override
    public List<WinRate> winRates(String opKey) {
        List<WinRate> out = new ArrayList<>();
        reports.aggregate(winRatePipeline(opKey)).forEach(d -> {
            int ranked = d.getInteger("ranked");
            int first = d.getInteger("first");
            out.add(new WinRate(d.getString("_id"), ranked, first, (double) first / ranked));
        });
        return out;
    }

    @Override
    public void export(String fingerprint, Consumer<Row> sink) {
        Bson filter = fingerprint == null ? new Document() : Filters.eq("fingerprint", fingerprint);
        reports.find(filter).sort(Sorts.ascending("receivedAtMs", "sessionId"))
                .projection(Projections.exclude("ranked.ref", "device"))
                .forEach(d -> {
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
