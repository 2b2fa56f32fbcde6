package dev.jitzoo.compiler.wgsl;

/**
 * WGSL text being written: lines at the current indentation, blocks that open and close braces,
 * and literals spelled so that the shader compiler reads back exactly the value meant.
 */
final class WgslSource {

    private static final String INDENT = "  ";

    private final StringBuilder text = new StringBuilder(4096);
    private int depth;

    /** Starts a line at the current indentation; finish it with {@link #end()}. */
    StringBuilder begin() {
        for (int i = 0; i < depth; i++) {
            text.append(INDENT);
        }
        return text;
    }

    /** Ends the line {@link #begin()} started. */
    void end() {
        text.append('\n');
    }

    WgslSource line(String line) {
        begin().append(line);
        end();
        return this;
    }

    WgslSource blank() {
        text.append('\n');
        return this;
    }

    /** {@code header \{} and one level deeper; an empty header opens a plain block. */
    WgslSource open(String header) {
        begin().append(header).append(header.isEmpty() ? "{" : " {");
        end();
        depth++;
        return this;
    }

    WgslSource close() {
        depth--;
        return line("}");
    }

    @Override
    public String toString() {
        return text.toString();
    }

    /** A u32 literal: {@code 7u}. */
    static String u(long value) {
        if (value < 0 || value > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("not a u32: " + value);
        }
        return value + "u";
    }

    /**
     * An f32 literal that reads back as exactly {@code value}: its shortest decimal when that
     * survives being read as a double and then rounded to f32 (how WGSL compilers read it) and is
     * not above the largest float, else the hexadecimal form, which is exact. Negative values come in parentheses so that they
     * can follow any operator. Infinities and NaN have no literal in WGSL.
     */
    static String f(float value) {
        if (!Float.isFinite(value)) {
            throw new IllegalArgumentException("WGSL has no literal for " + value);
        }
        String decimal = Float.toString(Math.abs(value)).replace('E', 'e');
        double read = Double.parseDouble(decimal);
        // Tint refuses an f32 literal beyond the largest float even when it would round to it (3.4028235e38f)
        String literal = (float) read == Math.abs(value) && read <= Float.MAX_VALUE
                ? decimal : Float.toHexString(Math.abs(value));
        literal += "f";
        return value < 0 || (value == 0 && 1 / value < 0) ? "(-" + literal + ")" : literal;
    }
}
