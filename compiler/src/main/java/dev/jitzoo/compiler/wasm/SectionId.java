package dev.jitzoo.compiler.wasm;

/** Module section ids with their byte values; known sections must appear in ascending id order. */
public enum SectionId {
    CUSTOM(0), TYPE(1), IMPORT(2), FUNCTION(3), TABLE(4), MEMORY(5), GLOBAL(6), EXPORT(7),
    START(8), ELEMENT(9), CODE(10), DATA(11), DATA_COUNT(12);

    public final int id;

    SectionId(int id) {
        this.id = id;
    }

    /** The section with this id, or null for an id the format does not define. */
    public static SectionId of(int id) {
        for (SectionId section : values()) {
            if (section.id == id) {
                return section;
            }
        }
        return null;
    }
}
