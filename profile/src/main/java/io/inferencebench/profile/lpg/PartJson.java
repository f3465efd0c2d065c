package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import io.inferencebench.profile.stats.MetricRecorder;
import io.inferencebench.profile.stats.RecorderSnapshot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The JSON of a stage result that a runner pod writes into its part ConfigMap, for the operator to
 * merge with the other pods' ({@link StageResult#merge}).
 *
 * <p>Recorders carry their raw samples while they fit: a recorder restored with its samples is the
 * recorder that held them, so merging the pods' recorders gives every percentile of a metric
 * exactly as one process recording all of the stage's values would (while the total is within the
 * sample cap; beyond it both read the same merged histogram). Without samples a merge can only
 * place a percentile within its histogram bucket, 2^-10 of its value.
 *
 * <p>What fits: a part holds the results of at most two stages (the runner drops a stage's result
 * once the run holds it), and a ConfigMap at most 1 MiB, so one result with samples may take {@link
 * #SAMPLES_BUDGET_BYTES}. The recorders whose samples take the least room go in first (token counts
 * deflate to little; ITL, a value per token, goes last), as many as fit.
 */
public final class PartJson {

    /** The most bytes one stage result with samples may take (two must fit in 1 MiB). */
    public static final int SAMPLES_BUDGET_BYTES = 400 * 1024;

    /** What a recorder's samples add to its JSON beyond their text: {@code ,"samples":""}. */
    private static final int SAMPLES_KEY_BYTES = 13;

    private PartJson() {}

    /**
     * The stage result as JSON, with the raw samples of as many recorders as fit in {@link
     * #SAMPLES_BUDGET_BYTES}, smallest first; without any when none fits (the caller checks that
     * size against what a ConfigMap key may hold).
     *
     * @param result the stage result
     * @return its JSON
     * @throws JsonProcessingException when it cannot be written
     */
    public static String write(StageResult result) throws JsonProcessingException {
        Map<MetricRecorder, RecorderSnapshot> withSamples = new IdentityHashMap<>();
        String plain =
                writer(
                                recorder -> {
                                    RecorderSnapshot s =
                                            recorder.snapshotWithSamples(Integer.MAX_VALUE);
                                    if (s.samples() != null) {
                                        withSamples.put(recorder, s);
                                    }
                                    return recorder.snapshot();
                                })
                        .writeValueAsString(result);
        long room = SAMPLES_BUDGET_BYTES - (long) plain.getBytes(StandardCharsets.UTF_8).length;
        List<MetricRecorder> smallestFirst = new ArrayList<>(withSamples.keySet());
        smallestFirst.sort(Comparator.comparingInt(r -> withSamples.get(r).samples().length()));
        Set<MetricRecorder> carried = Collections.newSetFromMap(new IdentityHashMap<>());
        for (MetricRecorder recorder : smallestFirst) {
            // base64 needs no escaping in JSON: its length is its size
            long cost = withSamples.get(recorder).samples().length() + SAMPLES_KEY_BYTES;
            if (cost > room) {
                break;
            }
            carried.add(recorder);
            room -= cost;
        }
        if (carried.isEmpty()) {
            return plain;
        }
        return writer(r -> carried.contains(r) ? withSamples.get(r) : r.snapshot())
                .writeValueAsString(result);
    }

    /** A mapper writing each recorder as {@code snapshot} says. */
    private static ObjectMapper writer(Function<MetricRecorder, RecorderSnapshot> snapshot) {
        SimpleModule module = new SimpleModule("part-samples");
        module.addSerializer(
                MetricRecorder.class,
                new JsonSerializer<>() {
                    @Override
                    public void serialize(
                            MetricRecorder recorder, JsonGenerator gen, SerializerProvider provider)
                            throws IOException {
                        gen.writeObject(snapshot.apply(recorder));
                    }
                });
        return new ObjectMapper().registerModule(module);
    }
}
