package dev.jitzoo.cli.bench;

import java.util.Arrays;
import java.util.List;

/**
 * The arguments a bench's own JVM gets ({@code ./jitzoo bench NAME ...} starts it on a private
 * stack and passes them on): {@code --json}, and counts as {@code --name N}. One reading for every
 * bench, so a count that is not one is refused the same way everywhere.
 */
record BenchArgs(List<String> argv) {

    static BenchArgs of(String[] args) {
        return new BenchArgs(Arrays.asList(args));
    }

    /** Whether the figures go out as one JSON line. */
    boolean json() {
        return flag("--json");
    }

    /** Whether a switch such as {@code --zoo-ingesting} was given. */
    boolean flag(String name) {
        return argv.contains(name);
    }

    /** A positive count given as {@code name N}, else {@code otherwise}. */
    int count(String name, int otherwise) {
        return count(name, otherwise, "[1-9][0-9]{0,8}", "a positive count");
    }

    /** As {@link #count}, zero allowed. */
    int countOrZero(String name, int otherwise) {
        return count(name, otherwise, "0|[1-9][0-9]{0,8}", "a count (0 or more)");
    }

    private int count(String name, int otherwise, String pattern, String what) {
        int at = argv.indexOf(name);
        if (at < 0) {
            return otherwise;
        }
        if (at + 1 >= argv.size() || !argv.get(at + 1).matches(pattern)) {
            throw new IllegalArgumentException(name + " takes " + what);
        }
        return Integer.parseInt(argv.get(at + 1));
    }

    /** The phases named as {@code --only a,b}, each one of {@code known}; all of {@code known} when not given. */
    List<String> only(List<String> known) {
        int at = argv.indexOf("--only");
        if (at < 0) {
            return known;
        }
        List<String> named = at + 1 < argv.size() ? Arrays.asList(argv.get(at + 1).split(",", -1)) : List.of();
        if (named.isEmpty() || !known.containsAll(named)) {
            throw new IllegalArgumentException("--only takes phases among " + String.join(",", known));
        }
        return named;
    }
}
