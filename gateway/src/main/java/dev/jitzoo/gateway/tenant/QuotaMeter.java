package dev.jitzoo.gateway.tenant;

import dev.jitzoo.tenant.Quotas;
import dev.jitzoo.tenant.Tenant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts each tenant's use against its {@link Quotas} on this replica: one token bucket per tenant
 * and kind, holding a minute's quota and refilled evenly over the minute, so a tenant may burst up
 * to its quota and then goes on at its rate. The quota is read at each take: a changed tenant
 * counts from its new quota at once.
 */
public final class QuotaMeter {

    public enum Kind {
        SESSIONS("sessions"), REPORTS("reports"), OFFERS("offers");

        private final String noun;

        Kind(String noun) {
            this.noun = noun;
        }

        int perMinute(Quotas quotas) {
            return switch (this) {
                case SESSIONS -> quotas.sessionsPerMinute();
                case REPORTS -> quotas.reportsPerMinute();
                case OFFERS -> quotas.offersPerMinute();
            };
        }

        public String noun() {
            return noun;
        }
    }

    private static final long MINUTE_MS = 60_000;

    private record Meter(String tenant, Kind kind) {
    }

    /** Tokens in 60,000ths of a use: a millisecond refills {@code perMinute} of them, exactly. */
    private static final class Bucket {
        long tokens = -1; // full, once the quota is known
        long lastMs;
    }

    private final Map<Meter, Bucket> buckets = new ConcurrentHashMap<>();

    /** Takes {@code uses} of the tenant's quota of this kind, or none and false when fewer are left. */
    public boolean take(Tenant tenant, Kind kind, int uses, long nowMs) {
        int perMinute = kind.perMinute(tenant.quotas());
        if (perMinute == 0) {
            return true;
        }
        Bucket bucket = buckets.computeIfAbsent(new Meter(tenant.name(), kind), m -> new Bucket());
        synchronized (bucket) {
            long capacity = perMinute * MINUTE_MS;
            if (bucket.tokens < 0) {
                bucket.tokens = capacity;
            } else {
                long elapsed = Math.min(MINUTE_MS, Math.max(0, nowMs - bucket.lastMs));
                bucket.tokens = Math.min(capacity, bucket.tokens + elapsed * perMinute);
            }
            bucket.lastMs = Math.max(bucket.lastMs, nowMs);
            if (bucket.tokens < uses * MINUTE_MS) {
                return false;
            }
            bucket.tokens -= uses * MINUTE_MS;
            return true;
        }
    }
}
