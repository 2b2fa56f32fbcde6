package dev.jitzoo.tenant;

/**
 * What a tenant may use per minute, on each gateway replica: sessions started, reports stored,
 * kernel offers sent and uKernel plans asked for (each can cost the space seconds). 0 is no limit.
 */
public record Quotas(int sessionsPerMinute, int reportsPerMinute, int offersPerMinute, int planRequestsPerMinute) {

    public static final Quotas UNLIMITED = new Quotas(0, 0, 0, 0);
    /** What a tenant is made with unless told otherwise. */
    public static final Quotas NEW_TENANT = new Quotas(1000, 20_000, 500_000, 1000);

    public Quotas {
        if (sessionsPerMinute < 0 || reportsPerMinute < 0 || offersPerMinute < 0 || planRequestsPerMinute < 0) {
            throw new IllegalArgumentException("quotas are counts per minute, 0 or more (0: no limit)");
        }
    }

    /** Quotas with no limit on plan requests. */
    public Quotas(int sessionsPerMinute, int reportsPerMinute, int offersPerMinute) {
        this(sessionsPerMinute, reportsPerMinute, offersPerMinute, 0);
    }
}
