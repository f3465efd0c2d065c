package io.inferencebench.runner.plan;

import io.inferencebench.runner.http.TlsOptions;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code target} section as a runner sees it: the spec's backend and API as wire names (the
 * command line accepts more backends than the CRD's enum), the path, the model and the headers; the
 * CA as a file (a flag, or the file the operator mounted), since references are resolved before.
 *
 * @param backend backend wire name, or {@code null} for vllm
 * @param api completions, chat or generate, or {@code null} to derive it from backend and path
 * @param path request path, or {@code null} for the API's default
 * @param model model name, or {@code null}/blank to discover it
 * @param headers extra request headers (no credentials), or {@code null}
 * @param tls certificate checks
 */
public record PlanTarget(
        String backend,
        String api,
        String path,
        String model,
        Map<String, String> headers,
        TlsOptions tls) {

    public PlanTarget {
        headers =
                headers == null
                        ? Map.of()
                        : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        tls = tls == null ? TlsOptions.VERIFY : tls;
    }
}
