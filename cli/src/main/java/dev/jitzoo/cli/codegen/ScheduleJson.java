package dev.jitzoo.cli.codegen;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import dev.jitzoo.compiler.kernel.Schedule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * Schedules as the command line takes them: a JSON object with the fields of the ABI metadata's
 * {@code schedule} (missing integers are 0, missing booleans false), inline or in a file.
 */
final class ScheduleJson {

    private static final Set<String> INTS = Set.of("x0", "y0", "r0", "x1", "y1", "r1", "unroll");
    private static final Set<String> BOOLEANS = Set.of("vectorize", "relaxedSimd", "packB", "columnsOuter");

    private ScheduleJson() {
    }

    /** {@code text} is JSON when it starts with '{', else the path of a file holding it. */
    static Schedule parse(String text) {
        String json = text.strip();
        if (!json.startsWith("{")) {
            try {
                json = Files.readString(Path.of(text));
            } catch (IOException e) {
                throw new IllegalArgumentException("--schedule is neither a JSON object nor a readable file: " + text);
            }
        }
        JsonObject object;
        try {
            JsonElement element = JsonParser.parseString(json);
            if (!element.isJsonObject()) {
                throw new IllegalArgumentException("a schedule must be a JSON object, got " + element);
            }
            object = element.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new IllegalArgumentException("the schedule is not valid JSON: " + e.getMessage());
        }
        for (String key : object.keySet()) {
            if (!INTS.contains(key) && !BOOLEANS.contains(key)) {
                throw new IllegalArgumentException("unknown schedule field '" + key + "'; known: x0, y0, r0, x1, y1, r1, "
                        + "vectorize, unroll, relaxedSimd, packB, columnsOuter");
            }
        }
        return new Schedule(integer(object, "x0"), integer(object, "y0"), integer(object, "r0"),
                integer(object, "x1"), integer(object, "y1"), integer(object, "r1"), bool(object, "vectorize"),
                integer(object, "unroll"), bool(object, "relaxedSimd"), bool(object, "packB"),
                bool(object, "columnsOuter"));
    }

    private static int integer(JsonObject object, String key) {
        JsonElement value = object.get(key);
        if (value == null) {
            return 0;
        }
        if (!(value instanceof JsonPrimitive p) || !p.isNumber()) {
            throw new IllegalArgumentException("schedule field " + key + " must be an integer, got " + value);
        }
        double number = p.getAsDouble();
        if (number != Math.rint(number) || Math.abs(number) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("schedule field " + key + " must be an integer, got " + value);
        }
        return (int) number;
    }

    private static boolean bool(JsonObject object, String key) {
        JsonElement value = object.get(key);
        if (value == null) {
            return false;
        }
        if (!(value instanceof JsonPrimitive p) || !p.isBoolean()) {
            throw new IllegalArgumentException("schedule field " + key + " must be true or false, got " + value);
        }
        return p.getAsBoolean();
    }
}
