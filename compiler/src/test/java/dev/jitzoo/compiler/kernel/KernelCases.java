package dev.jitzoo.compiler.kernel;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** Parameterized kernel tests' cases: every op with every schedule. */
final class KernelCases {

    private KernelCases() {
    }

    static Stream<Arguments> everyOpWithEverySchedule(List<Op> ops, List<Schedule> schedules) {
        return ops.stream().flatMap(op -> schedules.stream().map(schedule -> Arguments.of(op, schedule)));
    }
}
