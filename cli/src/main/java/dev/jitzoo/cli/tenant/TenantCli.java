package dev.jitzoo.cli.tenant;

import com.google.gson.Gson;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.jitzoo.tenant.MongoTenantStore;
import dev.jitzoo.tenant.OriginPolicy;
import dev.jitzoo.tenant.Quotas;
import dev.jitzoo.tenant.Tenant;
import dev.jitzoo.tenant.TenantStore;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jitzoo tenant ...}: the gateway's tenants, their API keys, Origins and quotas, kept in
 * MongoDB. The gateway reads them (a change reaches it within its tenants' cache TTL, 30 s by
 * default); this command writes them through the same library (tenant-store), straight to the database.
 */
@Command(name = "tenant", mixinStandardHelpOptions = true,
        description = {"The gateway's tenants in MongoDB: API keys (only their SHA-256 is kept), page Origins, quotas.",
                "Quotas count per minute on each gateway replica; 0 is no limit. A key is printed once, when made."},
        subcommands = {TenantCli.Create.class, TenantCli.List.class, TenantCli.Rotate.class, TenantCli.Set.class, TenantCli.Remove.class})
public final class TenantCli implements Callable<Integer> {

    @Override
    public Integer call() {
        throw new IllegalArgumentException("give create, list, rotate, set or remove (./jitzoo tenant --help)");
    }

    /** Where the tenants are: the local stack's MongoDB unless told. */
    static final class Directory {
        @Option(names = "--mongo", description = "MongoDB connection string (default: $JITZOO_MONGO_URI, else the local stack's)")
        String uri;

        @Option(names = "--database", defaultValue = "jitzoo", description = "database of the tenants collection (default: ${DEFAULT-VALUE})")
        String database;

        @Option(names = "--json", description = "one JSON line instead of text")
        boolean json;

        <T> T with(Function<TenantStore, T> work) {
            String where = uri != null ? uri : System.getenv("JITZOO_MONGO_URI");
            if (where == null || where.isBlank()) {
                where = "mongodb://127.0.0.1:" + System.getenv().getOrDefault("JITZOO_MONGO_PORT", "27018");
            }
            String at = where;
            MongoClientSettings settings = MongoClientSettings.builder().applyConnectionString(new ConnectionString(at))
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build();
            try (MongoClient mongo = MongoClients.create(settings)) {
                return work.apply(new MongoTenantStore(mongo.getDatabase(database)));
            } catch (MongoException e) {
                throw new UncheckedIOException(new java.io.IOException("MongoDB at " + at + " does not answer (./jitzoo up?): "
                        + e.getMessage()));
            }
        }

        void print(String text, Map<String, Object> fields) {
            System.out.println(json ? new Gson().toJson(fields) : text);
        }
    }

    /** Quotas as options; on {@code set}, only those given change. */
    static final class QuotaOptions {
        @Option(names = "--sessions-per-minute", description = "sessions the tenant may start a minute (create: 1000)")
        Integer sessions;

        @Option(names = "--reports-per-minute", description = "reports it may send a minute (create: 20000)")
        Integer reports;

        @Option(names = "--offers-per-minute", description = "kernel offers it may be sent a minute (create: 500000)")
        Integer offers;

        @Option(names = "--plan-requests-per-minute", description = "uKernel plans it may ask for a minute (create: 1000)")
        Integer plans;

        Quotas over(Quotas base) {
            return new Quotas(sessions != null ? sessions : base.sessionsPerMinute(), reports != null ? reports : base.reportsPerMinute(),
                    offers != null ? offers : base.offersPerMinute(), plans != null ? plans : base.planRequestsPerMinute());
        }
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Makes a tenant and its first API key, printed once.")
    static final class Create implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "NAME", description = "a-z, 0-9 and '-', up to 63")
        String name;

        @Option(names = "--origin", description = "a page origin its key works from (https://app.example.com, https://*.example.com, "
                + "or '*' for any page and clients without one); repeat for more")
        java.util.List<String> origins = new java.util.ArrayList<>();

        @Mixin
        QuotaOptions quotas = new QuotaOptions();

        @Mixin
        Directory directory = new Directory();

        @Override
        public Integer call() {
            Tenant tenant = new Tenant(Tenant.checkName(name), checkedOrigins(origins), quotas.over(Quotas.NEW_TENANT));
            String key = directory.with(store -> store.create(tenant, Instant.now()));
            Map<String, Object> fields = describe(tenant);
            fields.put("api_key", key);
            directory.print("tenant " + name + " created\n" + text(tenant) + "\n  API key:  " + key
                    + "\n            shown this once; only its digest is kept. Sessions connect to ws://GATEWAY/v1/session?key=" + key, fields);
            return 0;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Every tenant: origins, quotas, keys by their first characters.")
    static final class List implements Callable<Integer> {
        @Mixin
        Directory directory = new Directory();

        @Override
        public Integer call() {
            java.util.List<TenantStore.Listed> all = directory.with(TenantStore::list);
            if (directory.json) {
                System.out.println(new Gson().toJson(all.stream().map(l -> {
                    Map<String, Object> fields = describe(l.tenant());
                    fields.put("keys", l.keys().stream().map(k -> Map.of("prefix", k.prefix(), "created_at", k.createdAt().toString(),
                            "expires_at", k.expiresAt() == null ? "" : k.expiresAt().toString())).toList());
                    return fields;
                }).toList()));
                return 0;
            }
            if (all.isEmpty()) {
                System.out.println("no tenants (./jitzoo tenant create NAME --origin ORIGIN)");
            }
            for (TenantStore.Listed listed : all) {
                System.out.println(listed.tenant().name() + " (since " + listed.createdAt() + ")\n" + text(listed.tenant()));
                listed.keys().forEach(k -> System.out.println("  key " + k.prefix() + "…  made " + k.createdAt()
                        + (k.expiresAt() == null ? "" : ", works until " + k.expiresAt())));
            }
            return 0;
        }
    }

    @Command(name = "rotate", mixinStandardHelpOptions = true, description = "A new API key, printed once; the old ones stop working after --grace.")
    static final class Rotate implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Option(names = "--grace", defaultValue = "PT0S", description = "how long the old keys go on working, ISO-8601 (PT1H; default: none)")
        Duration grace;

        @Mixin
        Directory directory = new Directory();

        @Override
        public Integer call() {
            if (grace.isNegative()) {
                throw new IllegalArgumentException("--grace is a duration of 0 or more");
            }
            String key = directory.with(store -> store.rotate(name, grace, Instant.now()));
            directory.print("tenant " + name + ": new API key " + key + " (shown this once)\n  "
                    + (grace.isZero() ? "the old keys stop working within the gateway's cache TTL (30 s by default)"
                    : "the old keys work for " + grace + " more"), new LinkedHashMap<>(Map.of("tenant", name, "api_key", key)));
            return 0;
        }
    }

    @Command(name = "set", mixinStandardHelpOptions = true, description = "Changes a tenant's origins (all given replace the old) or quotas.")
    static final class Set implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Option(names = "--origin", description = "the tenant's origins, replacing the old ones; repeat for more")
        java.util.List<String> origins = new java.util.ArrayList<>();

        @Mixin
        QuotaOptions quotas = new QuotaOptions();

        @Mixin
        Directory directory = new Directory();

        @Override
        public Integer call() {
            Tenant changed = directory.with(store -> {
                Tenant now = store.list().stream().map(TenantStore.Listed::tenant).filter(t -> t.name().equals(name)).findFirst()
                        .orElseThrow(() -> new TenantStore.TenantException("no tenant '" + name + "'"));
                Tenant next = new Tenant(name, origins.isEmpty() ? now.origins() : checkedOrigins(origins), quotas.over(now.quotas()));
                store.update(next);
                return next;
            });
            directory.print("tenant " + name + " changed\n" + text(changed), describe(changed));
            return 0;
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Removes a tenant: its keys stop working within the gateway's cache TTL.")
    static final class Remove implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Mixin
        Directory directory = new Directory();

        @Override
        public Integer call() {
            directory.with(store -> {
                store.remove(name);
                return null;
            });
            directory.print("tenant " + name + " removed", Map.of("tenant", name, "removed", true));
            return 0;
        }
    }

    private static java.util.List<String> checkedOrigins(java.util.List<String> given) {
        if (given.isEmpty()) {
            throw new IllegalArgumentException("give at least one --origin: a page origin such as https://app.example.com, or '*' for any");
        }
        return given.stream().map(OriginPolicy::checkEntry).toList();
    }

    private static Map<String, Object> describe(Tenant tenant) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("tenant", tenant.name());
        fields.put("origins", tenant.origins());
        fields.put("sessions_per_minute", tenant.quotas().sessionsPerMinute());
        fields.put("reports_per_minute", tenant.quotas().reportsPerMinute());
        fields.put("offers_per_minute", tenant.quotas().offersPerMinute());
        fields.put("plan_requests_per_minute", tenant.quotas().planRequestsPerMinute());
        return fields;
    }

    private static String text(Tenant tenant) {
        Quotas q = tenant.quotas();
        return "  origins:  " + String.join(" ", tenant.origins()) + "\n  quotas:   " + perMinute(q.sessionsPerMinute()) + " sessions, "
                + perMinute(q.reportsPerMinute()) + " reports, " + perMinute(q.offersPerMinute()) + " offers, "
                + perMinute(q.planRequestsPerMinute()) + " plan requests a minute per gateway replica";
    }

    private static String perMinute(int n) {
        return n == 0 ? "unlimited" : String.valueOf(n);
    }
}
