package dev.jitzoo.gateway.tenant;

import dev.jitzoo.tenant.Quotas;
import dev.jitzoo.tenant.Tenant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts each tenant's use against its {@link Quotas} on this replica, and each network address's
 * against the gateway's per-address quotas (so one address cannot use up the anonymous tenant's,
 * which every user without a key shares): one token bucket per tenant (or address) and kind,
 * holding a minute's quota and refilled evenly over the minute, so a client may burst up to its
 * quota and then goes on at its rate. The quota is read at each take: a changed tenant counts from
 * its new quota at once. Buckets left full are forgotten ({@link #forgetIdle}).
 */
public final class QuotaMeter {

    public enum Kind {
        SESSIONS("sessions"), REPORTS("reports"), OFFERS("offers"), PLAN_REQUESTS("plan requests");

        private final String noun;

        Kind(String noun) {
            this.noun = noun;
        }

        int perMinute(Quotas quotas) {
            return switch (this) {
                case SESSIONS -> quotas.sessionsPerMinute();
                case REPORTS -> quotas.reportsPerMinute();
                case OFFERS -> quotas.offersPerMinute();
                case PLAN_REQUESTS -> quotas.planRequestsPerMinute();
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
        return take(new Meter(tenant.name(), kind), kind.perMinute(tenant.quotas()), uses, nowMs);
    }

    /** Takes {@code uses} of a network address's quota of this kind ({@code perMinute}; 0: no limit), or none and false. */
    public boolean takeForAddress(String address, Kind kind, int perMinute, int uses, long nowMs) {
        return take(new Meter("address " + address, kind), perMinute, uses, nowMs);
    }

    /** Forgets the buckets not used for a minute: they are full again, as a new one starts. */
    public void forgetIdle(long nowMs) {
        buckets.entrySet().removeIf(e -> {
            synchronized (e.getValue()) {
                return nowMs - e.getValue().lastMs >= MINUTE_MS;
            }
        });
    }

    /** Buckets held (tenants' and addresses'). */
    public int buckets() {
        return buckets.size();
    }

    private boolean take(Meter meter, int perMinute, int uses, long nowMs) {
        if (perMinute == 0) {
            return true;
        }
        Bucket bucket = buckets.computeIfAbsent(meter, m -> new Bucket());
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
