package dev.jitzoo.zoo.infra;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.jitzoo.localstack.TestInfra;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The analytics pipelines are backed by indexes: each opens with a {@code $match} or {@code $sort}
 * whose first field leads an index the server holds on that collection (as the server lists them
 * once the zoo's stores have created theirs). Given a real MongoDB ({@code JITZOO_TEST_MONGO_URI}),
 * its query planner is asked too: every plan scans an index, none the whole collection. The
 * embedded MongoDB-wire server has no {@code explain}.
 */
class AnalyticsPlansTest {

    private static MongoClient client;
    private static MongoDatabase database;

    @BeforeAll
    static void stores() {
        client = MongoClients.create(TestInfra.mongoUri());
        database = client.getDatabase("plans-" + UUID.randomUUID().toString().substring(0, 8));
        new MongoReportStore(database);
        new MongoAnalytics(database);
    }

    @AfterAll
    static void drop() {
        database.drop();
        client.close();
    }

    @Test
    void everyPlanOpensOnTheLeadingFieldOfAnIndex() {
        for (MongoAnalytics.Plan plan : MongoAnalytics.plans()) {
            BsonDocument opening = plan.stages().get(0).toBsonDocument();
            String stage = opening.getFirstKey();
            assertTrue(stage.equals("$match") || stage.equals("$sort"), plan + " opens with " + stage + ", which no index serves");
            String field = opening.getDocument(stage).getFirstKey();
            Set<String> leading = leadingFields(plan.collection());
            assertTrue(leading.contains(field), plan.collection() + " has no index led by " + field + " (indexes lead with "
                    + leading + "): " + plan);
        }
    }

    @Test
    void aRealMongoDbPlansAnIndexScanForEveryPipeline() {
        assumeTrue(System.getenv("JITZOO_TEST_MONGO_URI") != null, "explain needs a real MongoDB: set JITZOO_TEST_MONGO_URI");
        for (MongoAnalytics.Plan plan : MongoAnalytics.plans()) {
            List<BsonDocument> stages = plan.stages().stream().map(Bson::toBsonDocument).toList();
            String explained = database.runCommand(new Document("explain", new Document("aggregate", plan.collection())
                    .append("pipeline", stages).append("cursor", new Document())).append("verbosity", "queryPlanner")).toJson();
            assertTrue(explained.contains("IXSCAN"), "no index scan for " + plan + ": " + explained);
            assertFalse(explained.contains("COLLSCAN"), "a collection scan for " + plan + ": " + explained);
        }
    }

    private static Set<String> leadingFields(String collection) {
        Set<String> fields = new HashSet<>();
        database.getCollection(collection).listIndexes().forEach(index -> fields.add(index.get("key", Document.class).keySet()
                .iterator().next()));
        return fields;
    }
}
