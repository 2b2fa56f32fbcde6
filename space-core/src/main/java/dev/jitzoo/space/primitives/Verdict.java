package dev.jitzoo.space.primitives;

/** What the pooled microbenchmarks say of a primitive. */
public enum Verdict {
    /** Pays on every device seen: fixed on. */
    ON,
    /** Costs on every device seen: fixed off. */
    OFF,
    /** Pays on some devices and not on others (or never measured): left in the space, both ways. */
    OPEN
}
