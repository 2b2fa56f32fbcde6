package dev.jitzoo.zoo.domain;

import java.util.Map;

/**
 * What the zoo does with its tenants' reports ({@code jitzoo.zoo.tenant-data}).
 * <ul>
 *   <li><b>shared</b> (the default): every tenant's reports elect one kernel per key, so a tenant's
 *       new device kind starts from what the whole crowd learned. Each tenant's network origins
 *       weigh its trust ({@code jitzoo.zoo.tenant-trust."name"}, else
 *       {@code jitzoo.zoo.default-trust}, 1): in the quorum and in the points that break a tie.
 *       A trust of 0 keeps a tenant's reports (stored, counted, timed) out of the elections; its
 *       sessions are still served the crowd's kernels.</li>
 *   <li><b>separate</b>: each tenant's reports elect its own kernels and only its own sessions
 *       get them; similar device kinds are looked up among its own reports too. Trust does not
 *       apply: a tenant's pool is its own.</li>
 * </ul>
 * A report or request without a tenant is the gateway's {@value #PUBLIC} one.
 */
public record TenantData(boolean separate, Map<String, Double> trust, double defaultTrust) {

    /** The tenant of sessions that gave no API key. */
    public static final String PUBLIC = "public";

    public TenantData {
        trust = Map.copyOf(trust);
        for (Map.Entry<String, Double> t : trust.entrySet()) {
            checkTrust("tenant-trust." + t.getKey(), t.getValue());
        }
        checkTrust("default-trust", defaultTrust);
    }

    /** Every tenant's reports pooled, every one trusted alike. */
    public static TenantData shared() {
        return new TenantData(false, Map.of(), 1);
    }

    private static void checkTrust(String name, double weight) {
        if (!(weight >= 0) || Double.isInfinite(weight)) {
            throw new IllegalArgumentException("jitzoo.zoo." + name + " must be a finite weight of 0 or more, got " + weight);
        }
    }

    /** A tenant's name as reports carry it: {@value #PUBLIC} for none. */
    public static String name(String tenant) {
        return tenant == null || tenant.isBlank() ? PUBLIC : tenant;
    }

    /** The pool a tenant's reports go to and its lookups read: its own where data is separate, else the shared one. */
    public String pool(String tenant) {
        return separate ? name(tenant) : "";
    }

    /** How much a tenant's origin weighs in an election (1 in a separate pool: it is the tenant's own). */
    public double trust(String tenant) {
        return separate ? 1 : trust.getOrDefault(name(tenant), defaultTrust);
    }
}
