package dev.jitzoo.tenant;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import org.bson.Document;

/**
 * Tenants in the MongoDB collection {@code tenants}, one document each:
 * <pre>{ _id: name, origins: [..], quotas: {sessionsPerMinute, reportsPerMinute, offersPerMinute, planRequestsPerMinute},
 *   keys: [{hash, prefix, createdAt, expiresAt}], createdAt }</pre>
 * {@code hash} is SHA-256 of the key, indexed; {@code expiresAt} is null for a key that has not been rotated out.
 */
public final class MongoTenantStore implements TenantStore {

    public static final String COLLECTION = "tenants";

    private final MongoCollection<Document> tenants;

    public MongoTenantStore(MongoDatabase database) {
        this.tenants = database.getCollection(COLLECTION);
    }

    @Override
    public Optional<Tenant> byKeyHash(String keyHash, Instant now) {
        Document found = tenants.find(Filters.eq("keys.hash", keyHash)).first();
        if (found == null) {
            return Optional.empty();
        }
        boolean live = found.getList("keys", Document.class).stream()
                .anyMatch(k -> keyHash.equals(k.getString("hash")) && (k.getDate("expiresAt") == null || k.getDate("expiresAt").toInstant().isAfter(now)));
        return live ? Optional.of(tenant(found)) : Optional.empty();
    }

    @Override
    public String create(Tenant tenant, Instant now) {
        tenants.createIndex(Indexes.ascending("keys.hash")); // made by the writer: the gateway only reads
        String key = ApiKeys.generate();
        Document doc = new Document("_id", tenant.name()).append("origins", tenant.origins()).append("quotas", quotas(tenant.quotas()))
                .append("keys", List.of(key(key, now))).append("createdAt", Date.from(now));
        try {
            tenants.insertOne(doc);
        } catch (MongoWriteException e) {
            if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                throw new TenantException("tenant '" + tenant.name() + "' exists already");
            }
            throw e;
        }
        return key;
    }

    @Override
    public String rotate(String name, Duration grace, Instant now) {
        Document found = existing(name);
        List<Document> keys = new ArrayList<>();
        Instant until = now.plus(grace);
        for (Document old : found.getList("keys", Document.class)) {
            Date expires = old.getDate("expiresAt");
            if (grace.isZero() || (expires != null && !expires.toInstant().isAfter(now))) {
                continue; // out at once, or already expired: dropped
            }
            keys.add(new Document(old).append("expiresAt", Date.from(expires == null || expires.toInstant().isAfter(until) ? until : expires.toInstant())));
        }
        String key = ApiKeys.generate();
        keys.add(key(key, now));
        tenants.updateOne(Filters.eq("_id", name), Updates.set("keys", keys));
        return key;
    }

    @Override
    public void update(Tenant tenant) {
        existing(tenant.name());
        tenants.updateOne(Filters.eq("_id", tenant.name()),
                Updates.combine(Updates.set("origins", tenant.origins()), Updates.set("quotas", quotas(tenant.quotas()))));
    }

    @Override
    public void remove(String name) {
        if (tenants.deleteOne(Filters.eq("_id", name)).getDeletedCount() == 0) {
            throw new TenantException("no tenant '" + name + "'");
        }
    }

    @Override
    public List<Listed> list() {
        List<Listed> listed = new ArrayList<>();
        for (Document doc : tenants.find().sort(Sorts.ascending("_id"))) {
            List<Key> keys = doc.getList("keys", Document.class).stream().map(k -> new Key(k.getString("prefix"),
                    k.getDate("createdAt").toInstant(), k.getDate("expiresAt") == null ? null : k.getDate("expiresAt").toInstant())).toList();
            listed.add(new Listed(tenant(doc), keys, doc.getDate("createdAt").toInstant()));
        }
        return listed;
    }

    private Document existing(String name) {
        Document found = tenants.find(Filters.eq("_id", name)).first();
        if (found == null) {
            throw new TenantException("no tenant '" + name + "'");
        }
        return found;
    }

    private static Document key(String key, Instant now) {
        return new Document("hash", ApiKeys.hash(key)).append("prefix", ApiKeys.prefix(key)).append("createdAt", Date.from(now))
                .append("expiresAt", null);
    }

    private static Document quotas(Quotas quotas) {
        return new Document("sessionsPerMinute", quotas.sessionsPerMinute()).append("reportsPerMinute", quotas.reportsPerMinute())
                .append("offersPerMinute", quotas.offersPerMinute()).append("planRequestsPerMinute", quotas.planRequestsPerMinute());
    }

    private static Tenant tenant(Document doc) {
        Document q = doc.get("quotas", Document.class);
        return new Tenant(doc.getString("_id"), doc.getList("origins", String.class),
                new Quotas(q.getInteger("sessionsPerMinute"), q.getInteger("reportsPerMinute"), q.getInteger("offersPerMinute"),
                        q.getInteger("planRequestsPerMinute", 0))); // tenants made before plan-request quotas: none
    }
}
