package dev.jitzoo.cli.codegen;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import dev.jitzoo.compiler.kernel.Schedule;
import dev.jitzoo.compiler.kernel.Split;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * Schedules as the command line takes them: a JSON object with the fields of the ABI metadata's
 * {@code schedule} (missing integers are 0, missing booleans false, a missing split none; a split is
 * {@code {"axis":"rows","grain":8}}), inline or in a file.
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
            if (!INTS.contains(key) && !BOOLEANS.contains(key) && !key.equals("split")) {
                throw new IllegalArgumentException("unknown schedule field '" + key + "'; known: x0, y0, r0, x1, y1, r1, "
                        + "vectorize, unroll, relaxedSimd, packB, columnsOuter, split");
            }
        }
        return new Schedule(integer(object, "x0"), integer(object, "y0"), integer(object, "r0"),
                integer(object, "x1"), integer(object, "y1"), integer(object, "r1"), bool(object, "vectorize"),
                integer(object, "unroll"), bool(object, "relaxedSimd"), bool(object, "packB"),
                bool(object, "columnsOuter"), split(object.get("split")));
    }

    private static Split split(JsonElement value) {
        if (value == null) {
            return Split.NONE;
        }
        if (!value.isJsonObject()) {
            throw new IllegalArgumentException("schedule field split must be an object like {\"axis\":\"rows\",\"grain\":8}, got "
                    + value);
        }
        JsonObject split = value.getAsJsonObject();
        JsonElement axis = split.get("axis");
        if (axis != null && axis.isJsonPrimitive() && axis.getAsString().equals(Split.Axis.COLUMNS.label)) {
            return Split.columns(integer(split, "grain"));
        }
        if (axis == null || !axis.isJsonPrimitive() || !axis.getAsString().equals(Split.Axis.ROWS.label)) {
            throw new IllegalArgumentException("a split's axis must be \"rows\" or \"columns\", got " + axis);
        }
        return Split.rows(integer(split, "grain"));
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
