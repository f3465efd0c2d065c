package io.inferencebench.crds.workorder;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * One stage as the whole run sees it, plus each runner pod's share of it. Shares add up exactly to
 * the stage: rates split evenly, integer counts split with the remainder going to the lowest
 * indexes.
 *
 * @param stage 1-based stage number
 * @param requestRate total requests/s, or {@code null} for a concurrency stage
 * @param concurrency total concurrency, or {@code null} for a rate stage
 * @param numPrompts total prompts, or {@code null} when bounded only by duration
 * @param duration stage duration text (e.g. {@code 60s}), or {@code null}
 * @param ratePerPod requests/s each pod sends, or {@code null}
 * @param concurrencyPerPod concurrency of pod i at index i, or {@code null}
 * @param promptsPerPod prompts of pod i at index i, or {@code null}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StageShare(
        int stage,
        Double requestRate,
        Integer concurrency,
        Integer numPrompts,
        String duration,
        Double ratePerPod,
        List<Integer> concurrencyPerPod,
        List<Integer> promptsPerPod) {}
