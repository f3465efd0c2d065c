package io.inferencebench.profile.stats;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Expected values written by {@code profile/scripts/numpy_golden.py}. */
final class NumpyGolden {

    record Case(
            String name,
            double[] values,
            double mean,
            double sd,
            double median,
            Map<Double, Double> percentiles) {}

    static final JsonNode ROOT = load();

    private NumpyGolden() {}

    private static JsonNode load() {
        try (InputStream in = NumpyGolden.class.getResourceAsStream("/numpy-golden.json")) {
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Case> cases() {
        List<Case> cases = new ArrayList<>();
        for (JsonNode c : ROOT.get("cases")) {
            double[] values = new double[c.get("values").size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = c.get("values").get(i).doubleValue();
            }
            cases.add(
                    new Case(
                            c.get("name").asText(),
                            values,
                            c.get("mean").doubleValue(),
                            c.get("sd").doubleValue(),
                            c.get("median").doubleValue(),
                            percentiles(c)));
        }
        return cases;
    }

    static Map<Double, Double> percentiles(JsonNode c) {
        Map<Double, Double> p = new LinkedHashMap<>();
        c.get("percentiles")
                .properties()
                .forEach(e -> p.put(Double.parseDouble(e.getKey()), e.getValue().doubleValue()));
        return p;
    }

    /**
     * The formula in the script: u_i = ((i * 2654435761) mod 2^32) / 2^32; x_i = 10 / (1 - u_i).
     */
    static double largeValue(long i) {
        double u = ((i * 2654435761L) & 0xFFFFFFFFL) / 4294967296.0;
        return 10.0 / (1.0 - u);
    }
}
