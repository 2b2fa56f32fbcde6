package dev.jitzoo.tenant;

import java.util.List;

/**
 * Whoever an API key belongs to: its name, the page Origins its key may be used from
 * ({@link OriginPolicy}) and its {@link Quotas}.
 */
public record Tenant(String name, List<String> origins, Quotas quotas) {

    /** The tenant of sessions that give no key, where the gateway does not require one. */
    public static final String ANONYMOUS = "public";

    public Tenant {
        origins = List.copyOf(origins);
    }

    /** Tenant names are their ids in storage, logs and reports: short, lower case, no spaces. */
    public static String checkName(String name) {
        if (name == null || !name.matches("[a-z0-9][a-z0-9-]{0,62}")) {
            throw new IllegalArgumentException("tenant name '" + name + "': 1 to 63 of a-z, 0-9 and '-', starting with a letter or digit");
        }
        if (name.equals(ANONYMOUS)) {
            throw new IllegalArgumentException("'" + ANONYMOUS + "' is the tenant of sessions without a key; choose another name");
        }
        return name;
    }
}
