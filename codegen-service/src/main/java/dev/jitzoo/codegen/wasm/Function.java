package dev.jitzoo.codegen.wasm;

import java.util.ArrayList;
import java.util.List;

/** A function in the expression IR: its type, declared locals (after the parameters) and body. */
public final class Function {

    private final FuncType type;
    private final List<ValType> locals;
    private List<Stmt> body;

    Function(FuncType type, List<ValType> locals, List<Stmt> body) {
        this.type = type;
        this.locals = new ArrayList<>(locals);
        this.body = body;
    }

    public FuncType type() {
        return type;
    }

    public List<Stmt> body() {
        return body;
    }

    /** Replaces the body, as a pass does. */
    public void body(List<Stmt> newBody) {
        this.body = newBody;
    }

    /** Declares a local (as a pass does) and returns its index. */
    public int addLocal(ValType valType) {
        locals.add(valType);
        return type.params().size() + locals.size() - 1;
    }

    public List<ValType> locals() {
        return List.copyOf(locals);
    }

    public int localCount() {
        return type.params().size() + locals.size();
    }

    /** The encoded body: local declarations (runs of one type grouped), the code, the final end. */
    public ByteWriter encode(boolean teeSetThenGet) {
        return BodyEncoder.encode(this, teeSetThenGet);
    }
}
