package dev.jitzoo.codegen.wasm;

/** Module section ids, in the order the binary format requires for the known ones. */
public enum SectionId {
    CUSTOM(0), TYPE(1), IMPORT(2), FUNCTION(3), EXPORT(7), CODE(10);

    public final int id;

    SectionId(int id) {
        this.id = id;
    }
}
