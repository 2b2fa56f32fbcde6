package dev.jitzoo.zoo.infra;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.jitzoo.proto.kernel.v1.DeviceProfile;
import dev.jitzoo.proto.kernel.v1.KernelRef;
import dev.jitzoo.proto.kernel.v1.Primitive;
import dev.jitzoo.zoo.domain.BestKernel;
import dev.jitzoo.zoo.domain.Election;
import dev.jitzoo.zoo.domain.ReportStore;
import dev.jitzoo.zoo.domain.SimilarKernels;
import dev.jitzoo.zoo.domain.ZooKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.bson.Document;
import org.bson.types.Binary;

/**
 * Reports in MongoDB: one document per measurement (so elections are plain aggregations) and
 * one per key for its elected kernel. Uses only what MongoDB and its wire-compatible embedded
 * stand-in both accept: no transactions, no change streams, no partial indexes.
 */
public class MongoReportStore implements ReportStore {

    private final MongoCollection<Document> measurements;
    private final MongoCollection<Document> best;
    private final MongoCollection<Document> microbench;

    public MongoReportStore(MongoDatabase database) {
        this.measurements = database.getCollection("measurements");
        this.best = database.getCollection("best");
        this.microbench = database.getCollection("microbench");
        microbench.createIndex(Indexes.ascending("sessionId", "primitive"), new IndexOptions().unique(true));
        measurements.createIndex(Indexes.ascending("key", "sessionId", "kernelId"), new IndexOptions().unique(true));
        measurements.createIndex(Indexes.ascending("fingerprint"));
        measurements.createIndex(Indexes.ascending("opKey"));
        measurements.createIndex(Indexes.descending("key", "receivedAtMs"));
    }

    @Override
    public void addMeasurements(List<Measurement> batch) {
        insertOnce(measurements, batch.stream().map(MongoReportStore::toDocument).toList());
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
    public List<Election.Vote> votes(ZooKey key, int sessions) {
        List<Election.Vote> votes = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        // newest first, a session's measurements together (it reported them at once): stop past the window
        for (Document doc : measurements.find(Filters.eq("key", key.asString()))
                .sort(Sorts.descending("receivedAtMs", "sessionId"))
                .projection(new Document("sessionId", 1).append("origin", 1).append("rank", 1).append("ref", 1).append("medianMs", 1))) {
            String session = doc.getString("sessionId");
            if (seen.add(session) && seen.size() > sessions) {
                break;
            }
            String origin = doc.getString("origin");
            votes.add(new Election.Vote(session, origin == null ? session : origin, doc.getInteger("rank"),
                    parseRef(doc.get("ref", Binary.class)), doc.getDouble("medianMs")));
        }
        return votes;
    }

    @Override
    public Optional<String> saveBest(ZooKey key, BestKernel kernel) {
        Document doc = new Document("_id", key.asString())
                .append("fingerprint", key.fingerprint())
                .append("opKey", key.opKey())
                .append("kernelId", kernel.kernel().getKernelId())
                .append("ref", new Binary(kernel.kernel().toByteArray()))
                .append("medianMs", kernel.medianMs())
                .append("reports", kernel.reports())
                .append("origins", kernel.origins());
        Document before = best.findOneAndReplace(Filters.eq("_id", key.asString()), doc,
                new FindOneAndReplaceOptions().upsert(true).returnDocument(ReturnDocument.BEFORE));
        return Optional.ofNullable(before).map(d -> d.getString("kernelId"));
    }

    @Override
    public Optional<BestKernel> findBest(ZooKey key) {
        Document doc = best.find(Filters.eq("_id", key.asString())).first();
        if (doc == null) {
            return Optional.empty();
        }
        return Optional.of(new BestKernel(parseRef(doc.get("ref", Binary.class)),
                doc.getDouble("medianMs"), doc.getInteger("reports"), doc.getInteger("origins", doc.getInteger("reports"))));
    }

    @Override
    public long countMeasurements(String fingerprint) {
        return measurements.countDocuments(Filters.eq("fingerprint", fingerprint));
    }

    @Override
    public List<SimilarKernels.KindTiming> timings(String opKey) {
        List<SimilarKernels.KindTiming> out = new ArrayList<>();
        measurements.aggregate(List.of(
                Aggregates.match(Filters.eq("opKey", opKey)),
                Aggregates.group(new Document("key", "$key").append("kernelId", "$kernelId"),
                        Accumulators.avg("meanMs", "$medianMs"),
                        Accumulators.sum("reports", 1),
                        Accumulators.first("ref", "$ref"),
                        Accumulators.last("device", "$device")))).forEach(doc -> {
            Binary device = doc.get("device", Binary.class);
            if (device == null) {
                return; // stored before devices were kept with measurements: no traits to compare
            }
            out.add(new SimilarKernels.KindTiming(doc.get("_id", Document.class).getString("key"), parseDevice(device),
                    parseRef(doc.get("ref", Binary.class)), doc.getDouble("meanMs"), doc.getInteger("reports")));
        });
        return out;
    }

    private static Document toDocument(Measurement m) {
        return new Document("key", m.key().asString())
                .append("opKey", m.key().opKey())
                .append("fingerprint", m.key().fingerprint())
                .append("device", new Binary(m.device().toByteArray()))
                .append("sessionId", m.sessionId())
                .append("origin", m.origin())
                .append("kernelId", m.kernel().getKernelId())
                .append("ref", new Binary(m.kernel().toByteArray()))
                .append("rank", m.rank())
                .append("medianMs", m.medianMs())
                .append("samples", m.samples())
                .append("receivedAtMs", m.receivedAtMs());
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
