package dev.jitzoo.gateway.tenant;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.jitzoo.gateway.GatewayConfig;
import dev.jitzoo.gateway.session.ProtocolException;
import dev.jitzoo.tenant.ApiKeys;
import dev.jitzoo.tenant.OriginPolicy;
import dev.jitzoo.tenant.Quotas;
import dev.jitzoo.tenant.Tenant;
import dev.jitzoo.tenant.TenantStore;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Tells which tenant a new connection belongs to, from the API key in its URL and its Origin
 * header, or why it is refused: no key where one is required, a key that names no tenant, an
 * Origin the tenant does not allow, or a tenant directory that cannot be read. Keys are looked up
 * by digest and kept for {@code cache-ttl} (a forged key's absence too), so a connection costs a
 * MongoDB read only for a key not seen lately.
 */
public final class Tenants {

    /** Lookups block on MongoDB: they run here, never on an event loop. */
    private static final ExecutorService LOOKUPS = Executors.newFixedThreadPool(2, runnable -> {
        Thread thread = new Thread(runnable, "gateway-tenant-lookup");
        thread.setDaemon(true);
        return thread;
    });

    private final AsyncLoadingCache<String, Optional<Tenant>> byKeyHash;
    private final boolean requireKey;
    private final Tenant anonymous;

    public Tenants(TenantStore store, GatewayConfig.TenantsConfig config) {
        this.requireKey = config.requireKey();
        this.anonymous = new Tenant(Tenant.ANONYMOUS, List.of("*"), new Quotas(config.anonymousSessionsPerMinute(),
                config.anonymousReportsPerMinute(), config.anonymousOffersPerMinute(), config.anonymousPlanRequestsPerMinute()));
        Duration ttl = config.cacheTtl();
        // read again in the background after the TTL; while that fails the last answer stands, for up to an hour
        this.byKeyHash = Caffeine.newBuilder().refreshAfterWrite(ttl).expireAfterWrite(ttl.plus(Duration.ofHours(1)))
                .maximumSize(100_000).executor(LOOKUPS).buildAsync(hash -> store.byKeyHash(hash, Instant.now()));
    }

    /**
     * The connection's tenant, or a failure with the {@link ProtocolException} that refuses it.
     *
     * @param key    the {@code key} parameter of the session URL, or null
     * @param origin the Origin header, or null (clients that are not browsers)
     */
    public Uni<Tenant> authenticate(String key, String origin) {
        if (key == null || key.isEmpty()) {
            return requireKey ? Uni.createFrom().failure(ProtocolException.unauthorized("this gateway requires an API key: "
                    + "add ?key=<your key> to the session URL")) : Uni.createFrom().item(anonymous);
        }
        if (!ApiKeys.wellFormed(key)) {
            return Uni.createFrom().failure(ProtocolException.unauthorized("the API key is not one of this gateway's keys"));
        }
        return Uni.createFrom().completionStage(() -> byKeyHash.get(ApiKeys.hash(key)))
                .onFailure().transform(f -> ProtocolException.directoryUnavailable("API keys cannot be checked now: " + f.getMessage()))
                .map(found -> {
                    Tenant tenant = found.orElseThrow(() -> ProtocolException.unauthorized("the API key is not one of this gateway's keys"
                            + " (rotated out or never made)"));
                    if (!OriginPolicy.allows(tenant.origins(), origin)) {
                        throw ProtocolException.forbiddenOrigin(origin == null || origin.isBlank()
                                ? "tenant " + tenant.name() + "'s key is for pages of its origins; this client sent no Origin"
                                : "tenant " + tenant.name() + "'s key may not be used from " + origin);
                    }
                    return tenant;
                });
    }
}
