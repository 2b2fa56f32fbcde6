package dev.jitzoo.cli.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
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
}
