package dev.jitzoo.tenant;

/**
 * What a tenant may use per minute, on each gateway replica: sessions started, reports stored and
 * kernel offers sent. 0 is no limit.
 */
public record Quotas(int sessionsPerMinute, int reportsPerMinute, int offersPerMinute) {

    public static final Quotas UNLIMITED = new Quotas(0, 0, 0);
    /** What a tenant is made with unless told otherwise. */
    public static final Quotas NEW_TENANT = new Quotas(1000, 20_000, 500_000);

    public Quotas {
        if (sessionsPerMinute < 0 || reportsPerMinute < 0 || offersPerMinute < 0) {
            throw new IllegalArgumentException("quotas are counts per minute, 0 or more (0: no limit)");
        }
    }
}
