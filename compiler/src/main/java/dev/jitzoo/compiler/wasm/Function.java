package dev.jitzoo.compiler.wasm;

import java.util.ArrayList;
import java.util.List;

/**
 * A function in the expression IR: its type, declared locals (after the parameters) and body.
 * Immutable: a pass returns a new function ({@link #withBody}, {@link #withLocals}).
 */
public record Function(FuncType type, List<ValType> locals, List<Stmt> body) {

    public Function {
        locals = List.copyOf(locals);
        body = List.copyOf(body);
    }

    /** The same function with another body. */
    public Function withBody(List<Stmt> newBody) {
        return new Function(type, locals, newBody);
    }

    /** The same function with more locals declared after its own, and another body that uses them. */
    public Function withLocals(List<ValType> added, List<Stmt> newBody) {
        List<ValType> all = new ArrayList<>(locals);
        all.addAll(added);
        return new Function(type, all, newBody);
    }

    public int localCount() {
        return type.params().size() + locals.size();
    }

    /** The encoded body: local declarations (runs of one type grouped), the code, the final end. */
    public ByteWriter encode(boolean teeSetThenGet) {
        return BodyEncoder.encode(this, teeSetThenGet);
    }
}
