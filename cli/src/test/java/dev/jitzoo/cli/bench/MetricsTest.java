package dev.jitzoo.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A Prometheus page as the services print it, read the way the benches read it. */
class MetricsTest {

    private static final Metrics PAGE = Metrics.parse("""
            # HELP jitzoo_zoo_reports_ingested_total Reports ingested
            # TYPE jitzoo_zoo_reports_ingested_total counter
            jitzoo_zoo_reports_ingested_total 20000.0
            jitzoo_zoo_reports_ingested_created 1.7E9
            jitzoo_gateway_offer_seconds{quantile="0.5"} 0.0021
            jitzoo_gateway_offer_seconds{quantile="0.99"} 0.0150
            jvm_memory_used_bytes{area="heap",id="Eden Space"} 1000.0
            jvm_memory_used_bytes{area="heap",id="Tenured Gen"} 3000.0
            jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 500.0
            jvm_memory_max_bytes{area="heap",id="Eden Space"} -1.0
            jvm_memory_max_bytes{area="heap",id="Tenured Gen"} 4000.0
            not a sample
            """);

    @Test
    void readsSeriesByNameAndLabelsAsPrinted() {
        assertEquals(0.015, PAGE.get("jitzoo_gateway_offer_seconds{quantile=\"0.99\"}", Double.NaN));
        assertEquals(-7.0, PAGE.get("jitzoo_gateway_sessions", -7.0), "absent: the default");
    }

    @Test
    void sumsASeriesOverItsLabels() {
        assertEquals(20000.0, PAGE.total("jitzoo_zoo_reports_ingested_total"), "no other series whose name starts alike");
        assertEquals(4500.0, PAGE.total("jvm_memory_used_bytes"));
        assertEquals(4000.0, PAGE.values("jvm_memory_used_bytes", "area=\"heap\"").sum());
        assertEquals(4000.0, PAGE.values("jvm_memory_max_bytes", "area=\"heap\"").filter(v -> v > 0).sum());
        assertEquals(0.0, PAGE.total("jitzoo_zoo_elections_changed_total"));
    }

    /** Buckets of one histogram: 10 at or below 1 ms, 90 at or below 10 ms, 100 in all. */
    private static Metrics buckets(double upTo1ms, double upTo10ms, double all) {
        return Metrics.parse("""
                jitzoo_gateway_offer_seconds_bucket{le="0.001"} %s
                jitzoo_gateway_offer_seconds_bucket{le="0.01"} %s
                jitzoo_gateway_offer_seconds_bucket{le="+Inf"} %s
                jitzoo_gateway_offer_seconds_count %s
                """.formatted(upTo1ms, upTo10ms, all, all));
    }

    @Test
    void aQuantileBetweenTwoReadingsCountsOnlyWhatCameBetween() {
        Metrics before = buckets(1000, 1000, 5000); // a warm-up's slow offers, all past 10 ms
        Metrics after = buckets(1010, 1090, 5100);
        // 10 under 1 ms, 80 in (1, 10] ms, 10 past it: p50 is 40/80 of the way through the second bucket
        assertEquals(0.001 + 0.009 * 40 / 80, Metrics.quantileBetween(before, after, "jitzoo_gateway_offer_seconds", 0.5), 1e-12);
        assertEquals(0.001 * 5 / 10, Metrics.quantileBetween(before, after, "jitzoo_gateway_offer_seconds", 0.05), 1e-12);
        assertEquals(0.01, Metrics.quantileBetween(before, after, "jitzoo_gateway_offer_seconds", 0.99),
                "past the last finite bound: that bound");
        assertEquals(Double.NaN, Metrics.quantileBetween(after, after, "jitzoo_gateway_offer_seconds", 0.5), "nothing between");
    }
}
