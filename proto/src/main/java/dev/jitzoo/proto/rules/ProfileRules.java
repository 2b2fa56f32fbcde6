package dev.jitzoo.proto.rules;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import java.util.List;
import java.util.Map;

/**
 * How long a string a client's device profile may carry: every one of them travels into each
 * report, MongoDB document and log line of the session, so none may be large (a 60 KB user agent
 * would be copied thousands of times). The gateway refuses a Hello past it.
 */
public final class ProfileRules {

    /** The most characters any string of a profile may have (a user agent is a few hundred at most). */
    public static final int MAX_STRING_CHARS = 512;

    private ProfileRules() {
    }

    /** Why a message (a device profile) carries a string that is too long, naming its field, or null. */
    public static String problem(Message message, String path) {
        for (Map.Entry<FieldDescriptor, Object> field : message.getAllFields().entrySet()) {
            FieldDescriptor f = field.getKey();
            String name = path + "." + f.getName();
            List<?> values = f.isRepeated() ? (List<?>) field.getValue() : List.of(field.getValue());
            for (Object value : values) {
                if (value instanceof String s && s.length() > MAX_STRING_CHARS) {
                    return name + " is longer than " + MAX_STRING_CHARS + " characters (" + s.length() + ")";
                }
                if (value instanceof Message nested) {
                    String problem = problem(nested, name);
                    if (problem != null) {
                        return problem;
                    }
                }
            }
        }
        return null;
    }
}
