package dev.jitzoo.gateway.tenant;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.gateway.tenant.QuotaMeter.Kind;
import dev.jitzoo.tenant.Quotas;
import dev.jitzoo.tenant.Tenant;
import java.util.List;
import org.junit.jupiter.api.Test;

class QuotaMeterTest {

    private final QuotaMeter meter = new QuotaMeter();

    @Test
    void aTenantBurstsToItsQuotaThenGoesOnAtItsRate() {
        Tenant tenant = new Tenant("acme", List.of("*"), new Quotas(60, 0, 0));
        for (int i = 0; i < 60; i++) {
            assertTrue(meter.take(tenant, Kind.SESSIONS, 1, 1_000), "use " + i + " of the minute's 60");
        }
        assertFalse(meter.take(tenant, Kind.SESSIONS, 1, 1_000), "the 61st within the same instant");
        assertFalse(meter.take(tenant, Kind.SESSIONS, 1, 1_900), "0.9 s later: less than one refilled");
        assertTrue(meter.take(tenant, Kind.SESSIONS, 1, 2_000), "1 s later: one more (60 a minute)");
        assertFalse(meter.take(tenant, Kind.SESSIONS, 1, 2_000));
    }

    /**
     * An address has its own quota, whatever tenant it uses: one address that spends its sessions
     * leaves the anonymous tenant's to every other; idle full buckets are forgotten.
     */
    @Test
    void eachAddressHasItsOwnQuotaAndIdleBucketsAreForgotten() {
        for (int i = 0; i < 30; i++) {
            assertTrue(meter.takeForAddress("attacker", Kind.PLAN_REQUESTS, 30, 1, 0));
        }
        assertFalse(meter.takeForAddress("attacker", Kind.PLAN_REQUESTS, 30, 1, 0), "its 30 a minute used up");
        assertTrue(meter.takeForAddress("someone-else", Kind.PLAN_REQUESTS, 30, 1, 0), "another address is not held back");
        assertTrue(meter.takeForAddress("attacker", Kind.SESSIONS, 30, 1, 0), "its sessions are another bucket");
        assertTrue(meter.takeForAddress("attacker", Kind.REPORTS, 0, 1, 0), "0: no limit");
        assertTrue(meter.buckets() == 3, "no bucket is made for an unlimited quota: " + meter.buckets());
        meter.forgetIdle(59_999);
        assertTrue(meter.buckets() == 3, "used within the minute: kept");
        meter.forgetIdle(60_000);
        assertTrue(meter.buckets() == 0, "a minute unused: full again, forgotten");
        assertTrue(meter.takeForAddress("attacker", Kind.PLAN_REQUESTS, 30, 1, 60_000), "starts full");
    }

    @Test
    void aSmallQuotaRefillsThoughAskedEveryMillisecond() {
        Tenant tenant = new Tenant("slow", List.of("*"), new Quotas(0, 10, 0));
        for (int i = 0; i < 10; i++) {
            assertTrue(meter.take(tenant, Kind.REPORTS, 1, 0));
        }
        int taken = 0;
        for (long ms = 1; ms <= 6_000; ms++) {
            taken += meter.take(tenant, Kind.REPORTS, 1, ms) ? 1 : 0;
        }
        assertTrue(taken == 1, "6 s at 10 a minute refill one, even asked each millisecond: " + taken);
    }

    @Test
    void kindsAndTenantsAreCountedApartAndZeroIsNoLimit() {
        Tenant one = new Tenant("one", List.of("*"), new Quotas(1, 1, 0));
        Tenant two = new Tenant("two", List.of("*"), new Quotas(1, 1, 0));
        assertTrue(meter.take(one, Kind.SESSIONS, 1, 0));
        assertFalse(meter.take(one, Kind.SESSIONS, 1, 0));
        assertTrue(meter.take(one, Kind.REPORTS, 1, 0), "reports have their own quota");
        assertTrue(meter.take(two, Kind.SESSIONS, 1, 0), "another tenant's sessions are its own");
        for (int i = 0; i < 10_000; i++) {
            assertTrue(meter.take(one, Kind.OFFERS, 1, 0), "0: no limit");
        }
    }
}
