package dev.jitzoo.compiler.wasm.passes;

import dev.jitzoo.compiler.wasm.Expr;
import dev.jitzoo.compiler.wasm.Function;
import dev.jitzoo.compiler.wasm.Stmt;
import dev.jitzoo.compiler.wasm.ValType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Load to variable: within a straight run of statements, a load that occurs again before anything
 * could change its result (a store, a write to a local its address reads, a nested block or branch)
 * is loaded once, kept by {@code local.tee}, and read back with {@code local.get}. Locals are reused
 * once the values they held are dead, so a kernel declares about as many as one run needs.
 */
final class LoadToVariable {

    private record Key(Expr.Load load, int epoch) {
    }

    private final Function function;
    /** Locals this pass declares, after the function's own. */
    private final List<ValType> added = new ArrayList<>();
    private final Set<Integer> addressLocals = new HashSet<>();
    private final Map<ValType, ArrayDeque<Integer>> free = new EnumMap<>(ValType.class);

    private LoadToVariable(Function function) {
        this.function = function;
    }

    static Function apply(Function function) {
        LoadToVariable pass = new LoadToVariable(function);
        Trees.rewrite(function.body(), e -> {
            if (e instanceof Expr.Load load) {
                pass.collectLocals(load.address());
            }
            return e;
        }, s -> {
            if (s instanceof Stmt.Store store) {
                pass.collectLocals(store.address());
            }
            return s;
        });
        List<Stmt> body = pass.rewrite(function.body());
        return function.withLocals(pass.added, body);
    }

    private void collectLocals(Expr address) {
        Trees.rewrite(address, e -> {
            if (e instanceof Expr.LocalGet get) {
                addressLocals.add(get.local());
            }
            return e;
        });
    }

    /** One statement list: count repeated loads, then rewrite them; nested lists go the same way. */
    private List<Stmt> rewrite(List<Stmt> body) {
        Walk counting = new Walk(null);
        counting.statements(body);
        return new Walk(counting.counts).statements(body);
    }

    /** A walk over a list in evaluation order, counting loads (no counts yet) or rewriting them. */
    private final class Walk {

        /** Occurrences per load and epoch: being filled while counting, read while rewriting. */
        final Map<Key, Integer> counts;
        final boolean rewriting;
        final Map<Key, Integer> held = new HashMap<>();
        final List<Integer> live = new ArrayList<>();
        int epoch;

        Walk(Map<Key, Integer> counts) {
            this.counts = counts == null ? new HashMap<>() : counts;
            this.rewriting = counts != null;
        }

        List<Stmt> statements(List<Stmt> body) {
            List<Stmt> out = Trees.map(body, this::statement);
            invalidate();
            return out;
        }

        Stmt statement(Stmt statement) {
            return statement.accept(statementVisitor);
        }

        Expr expr(Expr e) {
            return e.accept(expressionVisitor);
        }

        /**
         * Rewrites a statement's expressions (a statement whose expressions stay is kept); a write
         * that may change a loaded value ends the epoch, and so does a nested body, which is a run
         * of its own: only the rewriting walk enters it.
         */
        private final Stmt.Visitor<Stmt> statementVisitor = new Trees.RebuildStatements() {
            @Override
            Expr expr(Expr e) {
                return Walk.this.expr(e);
            }

            @Override
            List<Stmt> body(List<Stmt> statements) {
                invalidate();
                return rewriting ? rewrite(statements) : statements;
            }

            @Override
            public Stmt localSet(Stmt.LocalSet set) {
                Stmt rebuilt = super.localSet(set);
                if (addressLocals.contains(set.local())) {
                    invalidate();
                }
                return rebuilt;
            }

            @Override
            public Stmt store(Stmt.Store store) {
                Stmt rebuilt = super.store(store);
                invalidate();
                return rebuilt;
            }

            @Override
            public Stmt branch(Stmt.Branch branch) {
                Stmt rebuilt = super.branch(branch);
                invalidate();
                return rebuilt;
            }
        };

        /** Rewrites an expression in evaluation order, counting or replacing repeated loads. */
        private final Expr.Visitor<Expr> expressionVisitor = new Trees.Rebuild() {
            @Override
            Expr child(Expr e) {
                return expr(e);
            }

            @Override
            public Expr localTee(Expr.LocalTee tee) {
                Expr rebuilt = super.localTee(tee);
                if (addressLocals.contains(tee.local())) {
                    invalidate();
                }
                return rebuilt;
            }

            @Override
            public Expr load(Expr.Load load) {
                Expr.Load rebuilt = (Expr.Load) super.load(load);
                return cacheable(rebuilt.address()) ? Walk.this.load(rebuilt) : rebuilt;
            }
        };

        private Expr load(Expr.Load load) {
            Key key = new Key(load, epoch);
            if (!rewriting) {
                counts.merge(key, 1, Integer::sum);
                return load;
            }
            if (counts.getOrDefault(key, 0) < 2) {
                return load;
            }
            Integer local = held.get(key);
            if (local != null) {
                return new Expr.LocalGet(local);
            }
            int fresh = take(load.op().loads());
            held.put(key, fresh);
            live.add(fresh);
            return new Expr.LocalTee(fresh, load);
        }

        /** Nothing loaded so far may be reused: the next loads start a new epoch, their locals return to the pool. */
        private void invalidate() {
            epoch++;
            for (int local : live) {
                free.computeIfAbsent(typeOf(local), t -> new ArrayDeque<>()).push(local);
            }
            live.clear();
            held.clear();
        }
    }

    private int take(ValType type) {
        ArrayDeque<Integer> pool = free.get(type);
        if (pool != null && !pool.isEmpty()) {
            return pool.pop();
        }
        added.add(type);
        return function.localCount() + added.size() - 1;
    }

    private ValType typeOf(int local) {
        int declared = local - function.type().params().size();
        int own = function.locals().size();
        return declared < own ? function.locals().get(declared) : added.get(declared - own);
    }

    /** An address of locals, constants and arithmetic only: loading it twice gives the same value. */
    private static boolean cacheable(Expr address) {
        if (address instanceof Expr.Apply apply) {
            for (Expr arg : apply.args()) {
                if (!cacheable(arg)) {
                    return false;
                }
            }
            return true;
        }
        return address instanceof Expr.LocalGet || address instanceof Expr.I32Const;
    }
}
