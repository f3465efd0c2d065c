package io.inferencebench.runner.cli;

import io.inferencebench.crds.v1alpha1.PrefixCacheSpec;
import io.inferencebench.profile.cache.PrefixCacheReset;
import io.inferencebench.runner.http.TlsOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** The {@code run} command's prefix-cache flags (a picocli mixin). */
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

    @Option(
            names = "--warm-prefix-cache",
            description =
                    "After each reset, send every shared prefix of the workload alone (asking for"
                            + " one token) to each server reset, so each stage starts warm: its"
                            + " requests find their prefix cached. Needs --dataset-name"
                            + " prefix_repetition; resets the base URL unless"
                            + " --reset-prefix-cache names the servers. Profiles say"
                            + " prefix_cache: warm, or undeclared when a server refused.")
    boolean warm;

    /**
     * Whether stages start warm: the flag, or the config's {@code workload.prefixCache.state:
     * warm}.
     *
     * @param declared the config's {@code workload.prefixCache}, or {@code null}
     */
    boolean warm(PrefixCacheSpec declared) {
        return warm || (declared != null && declared.getState() == PrefixCacheSpec.State.WARM);
    }

    /**
     * The servers to reset (and warm), checked, in order; without the flag the base URL when the
     * config declares {@code workload.prefixCache} or {@code --warm-prefix-cache} is given, else
     * none.
     *
     * @param declared the config's {@code workload.prefixCache}, or {@code null}
     * @throws Main.UsageError when the flag names servers to reset and the config says not to
     */
    List<String> targets(String baseUrl, PrefixCacheSpec declared) {
        if (resetUrls != null && declared != null && !declared.resetsBeforeStage()) {
            throw new Main.UsageError(
                    "--reset-prefix-cache: not with the config's workload.prefixCache.reset false,"
                            + " which keeps what the caches hold (the base URL is warmed)");
        }
        if (resetUrls == null) {
            return declared != null || warm ? List.of(baseUrl.replaceAll("/+$", "")) : List.of();
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
     * The reset the flags (or the config's {@code workload.prefixCache}) ask for, or {@code null};
     * none where the config says {@code reset: false}.
     */
    PrefixCacheReset open(
            String baseUrl,
            PrefixCacheSpec declared,
            String backend,
            Map<String, String> headers,
            TlsOptions tls) {
        List<String> targets = targets(baseUrl, declared);
        return targets.isEmpty() || (declared != null && !declared.resetsBeforeStage())
                ? null
                : new PrefixCacheReset(
                        targets, backend, headers, sslContext(targets, tls), TIMEOUT);
    }

    /**
     * The load's certificate checks where a cache target is https (the reset's and the warming's),
     * {@code null} (the JVM's default trust, unused) where none is.
     */
    static javax.net.ssl.SSLContext sslContext(List<String> targets, TlsOptions tls) {
        return targets.stream().anyMatch(t -> t.regionMatches(true, 0, "https:", 0, 6))
                ? tls.jdkContext()
                : null;
    }
}
