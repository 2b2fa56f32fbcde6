package dev.jitzoo.tenant;

import java.net.URI;
import java.util.List;
import java.util.Locale;

/**
 * Which page Origins may open sessions with a tenant's key: each allow-list entry is an exact
 * origin ({@code https://app.example.com}, a port where not the scheme's default), a wildcard for
 * the subdomains of a host ({@code https://*.example.com}, the host itself not included), or
 * {@code *} for any page and for clients that send no Origin (servers, the CLI). Browsers set the
 * Origin header themselves and pages cannot change it: the list is what keeps a key copied from
 * one site's source from working on another's.
 */
public final class OriginPolicy {

    private OriginPolicy() {
    }

    public static boolean allows(List<String> allowList, String origin) {
        for (String entry : allowList) {
            if (entry.equals("*")) {
                return true;
            }
            if (origin != null && !origin.isBlank() && matches(entry, origin.trim().toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(String entry, String origin) {
        String pattern = entry.toLowerCase(Locale.ROOT);
        int wildcard = pattern.indexOf("://*.");
        if (wildcard < 0) {
            return pattern.equals(origin);
        }
        String scheme = pattern.substring(0, wildcard + 3);
        String suffix = pattern.substring(wildcard + 4); // ".example.com", with a port if the entry has one
        return origin.startsWith(scheme) && origin.endsWith(suffix) && origin.length() > scheme.length() + suffix.length()
                && !origin.substring(scheme.length(), origin.length() - suffix.length()).contains("/");
    }

    /** Checks an allow-list entry as an operator gives it: {@code *}, or scheme://host[:port], the host possibly {@code *.domain}. */
    public static String checkEntry(String entry) {
        if (entry.equals("*")) {
            return entry;
        }
        URI uri;
        try {
            uri = URI.create(entry.replace("://*.", "://wildcard."));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("origin '" + entry + "' is not scheme://host[:port]");
        }
        if (uri.getScheme() == null || uri.getHost() == null || !(uri.getPath() == null || uri.getPath().isEmpty())
                || uri.getQuery() != null || uri.getUserInfo() != null) {
            throw new IllegalArgumentException("origin '" + entry + "' is not scheme://host[:port] (no path, no trailing slash)");
        }
        return entry.toLowerCase(Locale.ROOT);
    }
}
