package io.inferencebench.runner.cli;

import io.inferencebench.profile.cache.PrefixCacheReset;
import io.inferencebench.runner.http.TlsOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** The {@code run} command's prefix-cache flag (a picocli mixin). */
final class PrefixCacheOptions {

    /** Value picocli gives {@code --reset-prefix-cache} when no URL follows it. */
    static final String BASE_URL = "<base-url>";

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Option(
            names = "--reset-prefix-cache",
            arity = "0..1",
            fallbackValue = BASE_URL,
            paramLabel = "URL[,URL...]",
            description =
                    "Empty the server's prefix cache before every stage (vLLM POST"
                            + " /reset_prefix_cache, served with VLLM_SERVER_DEV_MODE=1; SGLang"
                            + " POST /flush_cache), so each stage starts cold; a comma list resets"
                            + " several replicas. Profiles say prefix_cache: cold, or undeclared"
                            + " when a server refused.")
    String resetUrls;

    /**
     * The servers to reset, checked, in order; without the flag the base URL when the config
     * declares {@code workload.prefixCache}, else none.
     */
    List<String> targets(String baseUrl, boolean declaredCold) {
        if (resetUrls == null) {
            return declaredCold ? List.of(baseUrl.replaceAll("/+$", "")) : List.of();
        }
        List<String> targets = new ArrayList<>();
        for (String part : resetUrls.split(",", -1)) {
            String url = part.strip().equals(BASE_URL) ? baseUrl : part.strip();
            BaseUrl.check("--reset-prefix-cache", url);
            String trimmed = url.replaceAll("/+$", "");
            if (!targets.contains(trimmed)) {
                targets.add(trimmed);
            }
        }
        return targets;
    }

    /**
     * The reset the flag (or the config's {@code workload.prefixCache}) asks for, or {@code null}.
     */
    PrefixCacheReset open(
            String baseUrl,
            boolean declaredCold,
            String backend,
            Map<String, String> headers,
            TlsOptions tls) {
        List<String> targets = targets(baseUrl, declaredCold);
        return targets.isEmpty()
                ? null
                : new PrefixCacheReset(
                        targets,
                        backend,
                        headers,
                        targets.stream().anyMatch(t -> t.regionMatches(true, 0, "https:", 0, 6))
                                ? tls.jdkContext()
                                : null,
                        TIMEOUT);
    }
}
