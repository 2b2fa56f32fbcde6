package dev.jitzoo.compiler.kernel;

/**
 * Seeds for a test case's random inputs, the same in every run: from the case's text (records and
 * enums print by name), never from {@code hashCode()}, which for an enum differs from one JVM to
 * the next. A failure message that names the seed can be replayed.
 */
final class TestSeeds {

    private TestSeeds() {
    }

    static long of(Object... parts) {
        long seed = 1125899906842597L;
        for (Object part : parts) {
            for (char c : String.valueOf(part).toCharArray()) {
                seed = 31 * seed + c;
            }
        }
        return seed;
    }
}
