package dev.jitzoo.cli.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** The JUnit reports a test run wrote (Surefire's, Vitest's, the harness's), counted into one line. */
record JunitReports(List<Path> files, int total, int failed, int skipped) {

    private static final Pattern TESTCASE = Pattern.compile("<testcase[ >]");
    private static final Pattern FAILED = Pattern.compile("<(failure|error)[ >/]");
    private static final Pattern SKIPPED = Pattern.compile("<skipped[ >/]");

    /** The reports under the checkout written since {@code started}. */
    static JunitReports since(Path root, Instant started) {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(Files::isDirectory).toList()) {
                for (String folder : List.of("target/surefire-reports", "test-results")) {
                    Path dir = module.resolve(folder);
                    if (Files.isDirectory(dir)) {
                        try (Stream<Path> reports = Files.list(dir)) {
                            reports.filter(p -> p.toString().endsWith(".xml"))
                                    .filter(p -> folder.equals("test-results") || p.getFileName().toString().startsWith("TEST-"))
                                    .filter(p -> modified(p).isAfter(started))
                                    .forEach(files::add);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int total = 0;
        int failed = 0;
        int skipped = 0;
        for (Path file : files) {
            String xml = read(file);
            total += count(TESTCASE, xml);
            failed += count(FAILED, xml);
            skipped += count(SKIPPED, xml);
        }
        return new JunitReports(files, total, failed, skipped);
    }

    String summary() {
        return "tests: " + (total - failed - skipped) + " passed, " + failed + " failed, " + skipped + " skipped ("
                + files.size() + " JUnit reports)";
    }

    private static int count(Pattern pattern, String text) {
        return (int) pattern.matcher(text).results().count();
    }

    private static Instant modified(Path file) {
        try {
            return Files.getLastModifiedTime(file).toInstant();
        } catch (IOException e) {
            return Instant.EPOCH;
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
