package dev.jitzoo.compiler.wasm.passes;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The three passes the paper keeps on the Wasm IR (nnJIT section 4.3), each switchable. Every other
 * optimization a general-purpose compiler would run is already a point of the kernel space.
 */
public enum Pass {
    /** Offset load/store: a constant added to an address moves into the instruction's memarg offset. */
    OFFSET("offset"),
    /** Combined instruction: {@code f32.load} + {@code f32x4.splat} becomes {@code v128.load32_splat}. */
    SPLAT("splat"),
    /**
     * Load/store to variable: a load repeated while nothing can change its result is loaded once into
     * a local ({@code local.tee}), and {@code local.set x; local.get x} becomes {@code local.tee x}.
     */
    TEE("tee");

    public static final Set<Pass> ALL = Set.copyOf(EnumSet.allOf(Pass.class));

    /** The name in CLIs and benchmark output. */
    public final String label;

    Pass(String label) {
        this.label = label;
    }

    /** Passes from a comma-separated list of labels; {@code all} and {@code none} are accepted. */
    public static Set<Pass> parse(String list) {
        String trimmed = list.trim().toLowerCase(Locale.ROOT);
        if (trimmed.equals("all")) {
            return ALL;
        }
        if (trimmed.equals("none") || trimmed.isEmpty()) {
            return Set.of();
        }
        EnumSet<Pass> passes = EnumSet.noneOf(Pass.class);
        for (String label : trimmed.split(",")) {
            passes.add(Arrays.stream(values()).filter(p -> p.label.equals(label.trim())).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("unknown pass '" + label.trim() + "'; known: "
                            + Arrays.stream(values()).map(p -> p.label).collect(Collectors.joining(", "))
                            + ", all, none")));
        }
        return Set.copyOf(passes);
    }

    /** Labels in pass order, comma-separated ({@code none} for the empty set). */
    public static String describe(Set<Pass> passes) {
        return passes.isEmpty() ? "none" : Arrays.stream(values()).filter(passes::contains).map(p -> p.label)
                .collect(Collectors.joining(","));
    }
}
