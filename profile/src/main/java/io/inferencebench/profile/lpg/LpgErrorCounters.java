package io.inferencebench.profile.lpg;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * LPG's six error counters (named after the aiohttp exceptions its client caught) from our failure
 * classes ({@link StageResult#ERROR_CLASSES}). Every failed request lands in exactly one counter,
 * so the six add up to the stage's failures; {@code metrics.errors_by_class} keeps the finer
 * classes. The map, and why each class lands where it does, is in {@code docs/formats.md}.
 */
public final class LpgErrorCounters {

    /** LPG's counters, in the order its {@code init_errors_map} lists them. */
    public static final List<String> COUNTERS =
            List.of(
                    "ClientConnectorError",
                    "TimeoutError",
                    "ContentTypeError",
                    "ClientOSError",
                    "ServerDisconnectedError",
                    "unknown_error");

    /**
     * Where each of our failure classes is counted. aiohttp raises ClientConnectorError (and its
     * certificate and SSL subclasses) when no connection is made, TimeoutError past the client's
     * limit, ServerDisconnectedError when the server closes the connection before the response
     * ends, and ContentTypeError when a body is not the JSON the client expects. An HTTP error
     * status, an error event in a stream or an empty completion has no counter of its own in LPG
     * (its client failed on them while parsing): they are {@code unknown_error}, as is anything
     * else. No class of ours is ClientOSError: our {@code reset} covers resets and closes alike.
     */
    public static final Map<String, String> COUNTER_OF_CLASS =
            Map.ofEntries(
                    Map.entry("connect", "ClientConnectorError"),
                    Map.entry("tls", "ClientConnectorError"),
                    Map.entry("timeout", "TimeoutError"),
                    Map.entry("malformed_stream", "ContentTypeError"),
                    Map.entry("reset", "ServerDisconnectedError"),
                    Map.entry("http_429", "unknown_error"),
                    Map.entry("http_4xx", "unknown_error"),
                    Map.entry("http_5xx", "unknown_error"),
                    Map.entry("error_payload", "unknown_error"),
                    Map.entry("empty_response", "unknown_error"),
                    Map.entry("other", "unknown_error"));

    private LpgErrorCounters() {}

    /**
     * The counter a failure class is counted in.
     *
     * @param errorClass one of {@link StageResult#ERROR_CLASSES}; any other name counts as {@code
     *     unknown_error}
     * @return one of {@link #COUNTERS}
     */
    public static String counterOf(String errorClass) {
        return COUNTER_OF_CLASS.getOrDefault(errorClass, "unknown_error");
    }

    /**
     * The six counters of a stage's failures.
     *
     * @param errorsByClass failed requests by class (may be {@code null})
     * @return every counter of {@link #COUNTERS}, in that order, {@code 0} when none
     */
    public static Map<String, Long> count(Map<String, Long> errorsByClass) {
        Map<String, Long> counters = new LinkedHashMap<>();
        for (String counter : COUNTERS) {
            counters.put(counter, 0L);
        }
        if (errorsByClass != null) {
            errorsByClass.forEach(
                    (errorClass, n) -> {
                        if (n != null && n > 0) {
                            counters.merge(counterOf(errorClass), n, Long::sum);
                        }
                    });
        }
        return counters;
    }
}
