package dev.jitzoo.zoo.web;

import dev.jitzoo.zoo.ZooConfig;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;

/**
 * The zoo's admin surfaces — {@code /api/v1} (dead letters and their replay, every measurement's
 * export, any tenant's elections) and {@code /dashboard} — answer only a holder of the admin token
 * ({@code jitzoo.zoo.admin-token}; {@code ./jitzoo up} writes one to {@code .jitzoo/admin-token},
 * the chart keeps it in a Secret): as {@code Authorization: Bearer TOKEN}, or, for the dashboard
 * in a browser, a cookie set by opening {@code /dashboard/?token=TOKEN} once (HttpOnly,
 * SameSite=Strict: another site's page cannot ride on it). A POST takes JSON only, so a
 * cross-site form cannot send one. Without a configured token the admin surfaces are off.
 * Health and metrics ({@code /q/...}) stay open to the cluster.
 */
@ApplicationScoped
public class AdminAccess {

    static final String COOKIE = "jitzoo_admin";

    private final Optional<byte[]> token;

    public AdminAccess(ZooConfig config) {
        this.token = config.adminToken().filter(t -> !t.isBlank()).map(t -> t.getBytes(StandardCharsets.UTF_8));
    }

    void register(@Observes Filters filters) {
        filters.register(this::check, 100);
    }

    private void check(RoutingContext rc) {
        String path = rc.normalizedPath();
        if (!(path.startsWith("/api/") || path.equals("/dashboard") || path.startsWith("/dashboard/"))) {
            rc.next();
            return;
        }
        if (token.isEmpty()) {
            refuse(rc, 403, "the zoo's admin endpoints are off: set jitzoo.zoo.admin-token (JITZOO_ZOO_ADMIN_TOKEN)");
            return;
        }
        String asked = rc.request().getParam("token");
        if (asked != null && path.startsWith("/dashboard") && matches(asked)) {
            // once from the link, then from the cookie: the token leaves the address bar
            rc.response().addCookie(Cookie.cookie(COOKIE, asked).setHttpOnly(true).setSameSite(CookieSameSite.STRICT).setPath("/"));
            rc.response().setStatusCode(303).putHeader(HttpHeaders.LOCATION, "/dashboard/").end();
            return;
        }
        String header = rc.request().getHeader(HttpHeaders.AUTHORIZATION);
        Cookie cookie = rc.request().getCookie(COOKIE);
        boolean allowed = header != null && header.startsWith("Bearer ") && matches(header.substring("Bearer ".length()))
                || cookie != null && matches(cookie.getValue());
        if (!allowed) {
            rc.response().putHeader("WWW-Authenticate", "Bearer realm=\"jitzoo-zoo\"");
            refuse(rc, 401, "the zoo's admin endpoints need its admin token (Authorization: Bearer ...)");
            return;
        }
        if (rc.request().method() == HttpMethod.POST) {
            String type = rc.request().getHeader(HttpHeaders.CONTENT_TYPE);
            if (type == null || !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
                refuse(rc, 415, "a POST to the zoo takes application/json");
                return;
            }
        }
        rc.next();
    }

    private boolean matches(String given) {
        return MessageDigest.isEqual(token.get(), given.getBytes(StandardCharsets.UTF_8));
    }

    private static void refuse(RoutingContext rc, int status, String why) {
        rc.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end("{\"error\":\"" + why.replace("\"", "'") + "\"}");
    }
}
