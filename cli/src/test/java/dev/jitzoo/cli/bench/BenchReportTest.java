package dev.jitzoo.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The benches' output: the JSON line other tools read, the plain table, and how figures are rounded. */
class BenchReportTest {

    @Test
    void theJsonLineKeepsTheFiguresOrderAndTheirTypes() {
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("cores", 2);
        figures.put("zoo_reports_per_s_1", 5120L);
        figures.put("zoo_speedup_2_vs_1", 1.85);
        figures.put("store", "MongoDB, Redis cache");
        figures.put("zoo_cpu_share_pct_1", new LinkedHashMap<>(Map.of("load", 12L)));
        figures.put("honest_elected_by_attacker_share", new LinkedHashMap<>(Map.of("0.1", true)));
        assertEquals("{\"cores\":2,\"zoo_reports_per_s_1\":5120,\"zoo_speedup_2_vs_1\":1.85,\"store\":\"MongoDB, Redis cache\","
                + "\"zoo_cpu_share_pct_1\":{\"load\":12},\"honest_elected_by_attacker_share\":{\"0.1\":true}}", BenchReport.json(figures));
    }

    @Test
    void aFigureNotMeasuredIsNullInTheJsonLine() {
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("offer_p99_ms", Double.NaN);
        figures.put("reports_per_s", Double.POSITIVE_INFINITY);
        figures.put("welcome_p50_ms", 13.8);
        assertEquals("{\"offer_p99_ms\":null,\"reports_per_s\":null,\"welcome_p50_ms\":13.8}", BenchReport.json(figures));
    }

    @Test
    void printsOneJsonLineOrTheTable() {
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("reports", 5000);
        figures.put("ingest_s", 2.5);
        assertEquals("{\"reports\":5000,\"ingest_s\":2.5}\n", printed(() -> BenchReport.print(figures, true, BenchReport::list)));
        assertEquals(String.format("  %-40s %s%n  %-40s %s%n", "reports", 5000, "ingest_s", 2.5),
                printed(() -> BenchReport.print(figures, false, BenchReport::list)));
    }

    @Test
    void roundsToDigitsWithNaNAsZeroOrKept() {
        assertEquals(1.24, BenchReport.round(1.2351, 2));
        assertEquals(1235.0, BenchReport.round(1234.5, 0));
        assertEquals(0.0, BenchReport.round(Double.NaN, 1), "a JSON line needs a number");
        assertEquals(1.24, BenchReport.roundKeepingNaN(1.2351, 2));
        assertEquals(Double.NaN, BenchReport.roundKeepingNaN(Double.NaN, 1));
        assertEquals(Double.POSITIVE_INFINITY, BenchReport.roundKeepingNaN(Double.POSITIVE_INFINITY, 3));
    }

    private static String printed(Runnable print) {
        PrintStream out = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            print.run();
        } finally {
            System.setOut(out);
        }
        return bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    }
}
