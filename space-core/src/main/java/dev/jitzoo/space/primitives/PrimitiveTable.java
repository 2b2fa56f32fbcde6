package dev.jitzoo.space.primitives;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The web-consistent primitive table (nnJIT section 5.1): the microbenchmark results of every device
 * seen, pooled. A primitive is fixed on when turning it on never costs more than the threshold θ on
 * any device and gains at least θ on their geometric mean; fixed off in the mirror case; otherwise
 * it is left open, and the space tries it both ways. Shipped: {@code primitives/measured-here.json}
 * (this machine, Node and Chromium); more results (fleet data) are added from a directory.
 */
public final class PrimitiveTable {

    public static final double DEFAULT_THRESHOLD = 0.05;
    private static final String SHIPPED = "/primitives/measured-here.json";

    /** The shipped results' table at the default threshold. */
    public static final PrimitiveTable DEFAULT = derive(shipped(), DEFAULT_THRESHOLD);

    private final double threshold;
    private final List<MicrobenchResult> results;
    private final Map<Primitive, Verdict> verdicts;

    private PrimitiveTable(double threshold, List<MicrobenchResult> results, Map<Primitive, Verdict> verdicts) {
        this.threshold = threshold;
        this.results = List.copyOf(results);
        this.verdicts = verdicts;
    }

    /** The shipped results pooled with those of {@code extra} (a file or directory; null for none). */
    public static PrimitiveTable pooled(Path extra, double threshold) throws IOException {
        List<MicrobenchResult> all = new ArrayList<>(shipped());
        if (extra != null) {
            all.addAll(load(extra));
        }
        return derive(all, threshold);
    }

    /** Pools the results; a primitive no result measures stays open. */
    public static PrimitiveTable derive(List<MicrobenchResult> results, double threshold) {
        if (!(threshold >= 0 && threshold < 1)) {
            throw new IllegalArgumentException("the consistency threshold must be in [0, 1), got " + threshold);
        }
        Map<Primitive, Verdict> verdicts = new EnumMap<>(Primitive.class);
        for (Primitive p : Primitive.values()) {
            verdicts.put(p, verdict(speedups(results, p), threshold));
        }
        return new PrimitiveTable(threshold, results, verdicts);
    }

    static Verdict verdict(List<Double> speedups, double threshold) {
        if (speedups.isEmpty()) {
            return Verdict.OPEN;
        }
        double logSum = 0;
        double min = Double.MAX_VALUE;
        double max = 0;
        for (double s : speedups) {
            logSum += Math.log(s);
            min = Math.min(min, s);
            max = Math.max(max, s);
        }
        double mean = Math.exp(logSum / speedups.size());
        if (min >= 1 - threshold && mean >= 1 + threshold) {
            return Verdict.ON;
        }
        if (max <= 1 + threshold && mean <= 1 / (1 + threshold)) {
            return Verdict.OFF;
        }
        return Verdict.OPEN;
    }

    /** Each result's speedup of one primitive, where measured. */
    public static List<Double> speedups(List<MicrobenchResult> results, Primitive p) {
        return results.stream().map(r -> r.speedups().get(p.key())).filter(s -> s != null).toList();
    }

    public Verdict verdict(Primitive p) {
        return verdicts.get(p);
    }

    /** Every primitive's verdict. */
    public Map<Primitive, Verdict> verdicts() {
        return Collections.unmodifiableMap(verdicts);
    }

    public double threshold() {
        return threshold;
    }

    public List<MicrobenchResult> results() {
        return results;
    }

    /** The shipped results: this machine, Node and Chromium. */
    public static List<MicrobenchResult> shipped() {
        try (InputStream in = PrimitiveTable.class.getResourceAsStream(SHIPPED)) {
            if (in == null) {
                throw new IllegalStateException(SHIPPED + " is missing from the classpath");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), SHIPPED);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Results from a file (one result, or an array of them) or from every {@code *.json} of a directory. */
    public static List<MicrobenchResult> load(Path path) throws IOException {
        if (!Files.isDirectory(path)) {
            return parse(Files.readString(path), path.toString());
        }
        List<MicrobenchResult> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(path)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
                out.addAll(parse(Files.readString(f), f.toString()));
            }
        }
        return out;
    }

    /** Parses results; throws {@link IllegalArgumentException} naming the source and what is wrong. */
    static List<MicrobenchResult> parse(String json, String source) {
        try {
            JsonElement root = JsonParser.parseString(json);
            List<MicrobenchResult> out = new ArrayList<>();
            for (JsonElement e : root.isJsonArray() ? root.getAsJsonArray().asList() : List.of(root)) {
                out.add(result(e.getAsJsonObject(), source));
            }
            return out;
        } catch (JsonParseException | IllegalStateException | UnsupportedOperationException | NumberFormatException e) {
            throw new IllegalArgumentException(source + ": not microbenchmark results (" + e.getMessage() + ")", e);
        }
    }

    private static MicrobenchResult result(JsonObject o, String source) {
        if (!o.has("primitives") || !o.get("primitives").isJsonObject()) {
            throw new IllegalArgumentException(source + ": a result needs a \"primitives\" object of speedups");
        }
        Map<String, Double> speedups = new TreeMap<>();
        for (Map.Entry<String, JsonElement> e : o.getAsJsonObject("primitives").entrySet()) {
            double s = e.getValue().getAsDouble();
            if (!(s > 0 && s < 1000)) {
                throw new IllegalArgumentException(source + ": speedup of " + e.getKey() + " must be in (0, 1000), got " + s);
            }
            speedups.put(e.getKey(), s);
        }
        return new MicrobenchResult(text(o, "runner"), text(o, "device"), text(o, "engine"), speedups);
    }

    private static String text(JsonObject o, String key) {
        return o.has(key) && o.get(key).isJsonPrimitive() ? o.get(key).getAsString() : "";
    }
}
