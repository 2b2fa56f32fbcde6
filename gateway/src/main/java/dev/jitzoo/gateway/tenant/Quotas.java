package dev.jitzoo.gateway.tenant;

/**
 * What a tenant may use per minute, on each gateway replica: sessions started, reports stored and
 * kernel offers sent. 0 is no limit.
 */
public record Quotas(int sessionsPerMinute, int reportsPerMinute, int offersPerMinute) {

    public static final Quotas UNLIMITED = new Quotas(0, 0, 0);

    public Quotas {
        if (sessionsPerMinute < 0 || reportsPerMinute < 0 || offersPerMinute < 0) {
            throw new IllegalArgumentException("quotas are counts per minute, 0 or more (0: no limit)");
        }
    }
}
