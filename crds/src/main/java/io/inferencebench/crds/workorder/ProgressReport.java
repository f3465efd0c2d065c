package io.inferencebench.crds.workorder;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.UncheckedIOException;

/**
 * Live progress of one runner pod in one stage, the value of the part ConfigMap key {@code
 * progress.json}. The operator sums completed, failed, inFlight and achievedRate over pods.
 *
 * @param stage 1-based stage the numbers belong to
 * @param completed successful requests so far
 * @param failed failed requests so far
 * @param inFlight requests sent and not finished
 * @param achievedRate requests sent per second since the stage started
 * @param ttftP50Ms median time to first token of recent successful requests, or {@code null}
 * @param updatedAt RFC 3339 instant of this report
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProgressReport(
        int stage,
        long completed,
        long failed,
        long inFlight,
        double achievedRate,
        Double ttftP50Ms,
        String updatedAt) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public ProgressReport {
        // JSON has no NaN or Infinity; an undefined rate is 0 and an undefined median absent.
        if (!Double.isFinite(achievedRate) || achievedRate < 0) {
            achievedRate = 0;
        }
        if (ttftP50Ms != null && !Double.isFinite(ttftP50Ms)) {
            ttftP50Ms = null;
        }
    }

    /** The JSON text stored under {@code progress.json}. */
    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads a report written by {@link #toJson()}.
     *
     * @param json the text
     * @return the report
     */
    public static ProgressReport fromJson(String json) {
        try {
            return JSON.readValue(json, ProgressReport.class);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
