package dev.jitzoo.cli.bench;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonNull;
import com.google.gson.JsonPrimitive;
import com.google.gson.JsonSerializer;
import java.util.Map;
import java.util.function.Consumer;

/**
 * How the benches that run in a JVM of their own report: progress on stderr, figures on stdout as a
 * table, or as one JSON line with {@code --json}. The JSON keys are what other tools read.
 */
final class BenchReport {

    private BenchReport() {
    }

    /** A line of progress. */
    static void say(String line) {
        System.err.println(line);
    }

    /** JSON has no NaN: a figure not measured is null. */
    private static final Gson GSON = new GsonBuilder().serializeNulls().registerTypeAdapter(Double.class, (JsonSerializer<Double>) (value, type, context) ->
            value.isNaN() || value.isInfinite() ? JsonNull.INSTANCE : new JsonPrimitive(value)).create();

    /** The figures as one JSON object, in their order; a figure that is NaN (not measured) is null. */
    static String json(Map<String, ?> figures) {
        return GSON.toJson(figures);
    }

    /** With {@code json}, the figures as one JSON line; else as {@code table} prints them. */
    static void print(Map<String, Object> figures, boolean json, Consumer<Map<String, Object>> table) {
        if (json) {
            System.out.println(json(figures));
        } else {
            table.accept(figures);
        }
    }

    /** The plain table: a figure a line, its key and its value. */
    static void list(Map<String, Object> figures) {
        figures.forEach((k, v) -> System.out.printf("  %-40s %s%n", k, v));
    }

    /** {@code value} to {@code digits} decimals as {@link Math#round} rounds: NaN is 0, so a JSON line always has a number. */
    static double round(double value, int digits) {
        double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }

    /** {@code value} to {@code digits} decimals; NaN and the infinities stay as they are. */
    static double roundKeepingNaN(double value, int digits) {
        return Double.isFinite(value) ? round(value, digits) : value;
    }
}
