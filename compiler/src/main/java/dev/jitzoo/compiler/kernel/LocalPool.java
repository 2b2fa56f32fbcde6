package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.FunctionBuilder;
import dev.jitzoo.compiler.wasm.ValType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Locals by role. Code emitted one after another (an edge tile after the interior tiles) asks for
 * the same role and gets the same locals back, grown when it needs more, so a kernel declares as
 * many locals as its largest tile and not the sum over tiles.
 */
final class LocalPool {

    private final FunctionBuilder f;
    private final Map<Role, List<Integer>> roles = new HashMap<>();

    private record Role(String name, ValType type) {
    }

    LocalPool(FunctionBuilder f) {
        this.f = f;
    }

    int one(String role, ValType type) {
        return group(role, type, 1)[0];
    }

    int[] group(String role, ValType type, int count) {
        List<Integer> locals = roles.computeIfAbsent(new Role(role, type), r -> new ArrayList<>());
        while (locals.size() < count) {
            locals.add(f.local(type));
        }
        int[] group = new int[count];
        for (int i = 0; i < count; i++) {
            group[i] = locals.get(i);
        }
        return group;
    }
}
