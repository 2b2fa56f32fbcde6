package dev.jitzoo.compiler.wasm;

/**
 * What the expression IR and the encoder need to know of an instruction without immediates or with
 * a memarg: how it is written, how many operands it pops, whether it pushes a result, and for
 * memory accesses the natural alignment and the type loaded.
 */
public sealed interface Instruction permits Opcode, SimdOpcode {

    /** Writes the opcode bytes (a SIMD instruction: prefix, then its LEB128 sub-opcode). */
    void writeOpcode(ByteWriter out);

    /** Operands taken from the stack. */
    int pops();

    /** Whether it leaves a value on the stack. */
    boolean pushes();

    /** log2 of the access width in bytes for loads and stores; -1 for every other instruction. */
    int naturalAlignment();

    /** The type a load pushes; null for anything else. */
    ValType loads();

    String name();

    default boolean accessesMemory() {
        return naturalAlignment() >= 0;
    }
}
