package dev.jitzoo.tenant;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Where tenants and the digests of their API keys are kept ({@link MongoTenantStore}). The gateway
 * only reads it ({@link #byKeyHash}); {@code ./jitzoo tenant} changes it. Calls block.
 */
public interface TenantStore {

    /** A tenant as listed: its keys by prefix, with when each was made and, when rotated out, until when it works. */
    record Listed(Tenant tenant, List<Key> keys, Instant createdAt) {
    }

    record Key(String prefix, Instant createdAt, Instant expiresAt) {
    }

    /** The tenant whose unexpired key has this digest ({@link ApiKeys#hash}). */
    Optional<Tenant> byKeyHash(String keyHash, Instant now);

    /** Makes a tenant and its first key, and returns the key (shown once, never stored). */
    String create(Tenant tenant, Instant now);

    /** A new key for the tenant, returned; its older keys stop working after {@code grace} (zero: at once). */
    String rotate(String name, Duration grace, Instant now);

    /** Changes a tenant's origins and quotas. */
    void update(Tenant tenant);

    void remove(String name);

    List<Listed> list();

    /** Thrown for a tenant name that is not there, or already is. */
    final class TenantException extends IllegalArgumentException {
        public TenantException(String message) {
            super(message);
        }
    }
}
