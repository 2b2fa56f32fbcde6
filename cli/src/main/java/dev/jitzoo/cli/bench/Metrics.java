package dev.jitzoo.cli.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.DoubleStream;

/** A service's Prometheus page ({@code /q/metrics}) as read once: each sample by its series, name and labels as printed. */
record Metrics(Map<String, Double> samples) {

    /** The page of the service at {@code origin} ({@code http://host:port}). */
    static Metrics read(HttpClient http, String origin) throws IOException, InterruptedException {
        return parse(http.send(HttpRequest.newBuilder(URI.create(origin + "/q/metrics")).build(), HttpResponse.BodyHandlers.ofString())
                .body());
    }

    static Metrics parse(String page) {
        Map<String, Double> samples = new LinkedHashMap<>();
        page.lines().filter(l -> !l.startsWith("#") && l.lastIndexOf(' ') > 0).forEach(l -> {
            try {
                samples.put(l.substring(0, l.lastIndexOf(' ')), Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)));
            } catch (NumberFormatException ignored) {
                // not a sample line
            }
        });
        return new Metrics(samples);
    }

    /** One series, as printed ({@code name} or {@code name{labels}}). */
    double get(String series, double otherwise) {
        return samples.getOrDefault(series, otherwise);
    }

    /** The samples of {@code name} whose labels begin with {@code labels} ({@code ""}: every sample of it). */
    DoubleStream values(String name, String labels) {
        return samples.entrySet().stream()
                .filter(e -> labels.isEmpty() && e.getKey().equals(name) || e.getKey().startsWith(name + "{" + labels))
                .mapToDouble(Map.Entry::getValue);
    }

    /** The sum of every sample of {@code name}, whatever its labels; 0 when there is none. */
    double total(String name) {
        return values(name, "").sum();
    }

    /**
     * The {@code q} quantile, in the histogram's unit, of what {@code name}'s histogram counted
     * between two readings of a page ({@code name_bucket{le="..."}} samples: the later's counts less
     * the earlier's), interpolated within its bucket as Prometheus' {@code histogram_quantile} does;
     * NaN when nothing was counted between them.
     */
    static double quantileBetween(Metrics before, Metrics after, String name, double q) {
        TreeMap<Double, Double> counted = new TreeMap<>(); // upper bound -> observations at or below it
        String prefix = name + "_bucket{";
        after.samples().forEach((series, count) -> {
            int le = series.indexOf("le=\"");
            if (series.startsWith(prefix) && le >= 0) {
                String bound = series.substring(le + 4, series.indexOf('"', le + 4));
                double upper = bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound);
                counted.merge(upper, count - before.get(series, 0.0), Double::sum);
            }
        });
        double total = counted.isEmpty() ? 0 : counted.lastEntry().getValue();
        if (total <= 0) {
            return Double.NaN;
        }
        double rank = q * total;
        double lower = 0;
        double below = 0;
        for (Map.Entry<Double, Double> bucket : counted.entrySet()) {
            if (bucket.getValue() >= rank) {
                if (bucket.getKey().isInfinite()) {
                    return lower; // past the last finite bound: the most a histogram can say
                }
                double inBucket = bucket.getValue() - below;
                return lower + (bucket.getKey() - lower) * (inBucket == 0 ? 1 : (rank - below) / inBucket);
            }
            lower = bucket.getKey();
            below = bucket.getValue();
        }
        return lower;
    }
}
