package io.inferencebench.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-stage server line shows what the server said and flags what it cannot have meant. */
class ServerMetricsLineTest {

    /** The stage's line from scrapes of vLLM pages with these gauge values, one per scrape. */
    private static String line(String running, String waiting, String... kv) {
        List<Scrape> scrapes = new ArrayList<>();
        for (int i = 0; i < kv.length; i++) {
            String page =
                    "# TYPE vllm:num_requests_running gauge\n"
                            + "vllm:num_requests_running{model_name=\"m\"} "
                            + running
                            + "\n# TYPE vllm:num_requests_waiting gauge\n"
                            + "vllm:num_requests_waiting{model_name=\"m\"} "
                            + waiting
                            + "\n# TYPE vllm:kv_cache_usage_perc gauge\n"
                            + "vllm:kv_cache_usage_perc{model_name=\"m\"} "
                            + kv[i]
                            + "\n";
            scrapes.add(Scrape.success("a", i * 1000L, PrometheusTextParser.parse(page)));
        }
        ServerMetricsReport report =
                WindowStatistics.compute(
                        ServerMetricCatalog.forBackend("vllm"), scrapes, 0, 60_000, kv.length);
        return ServerMetricsLine.format(1, report);
    }

    @Test
    void aRatioIsAPercentage() {
        assertThat(line("7", "3", "0.42", "0.42")).contains("running 7.00 waiting 3.00 kv 42.0 %");
    }

    @Test
    void aRatioOutsideZeroToOneIsShownAsTheServerSaidAndFlagged() {
        // Was "kv -500.0 %".
        String minusFive = line("1", "0", "-5", "-5");
        assertThat(minusFive).contains("kv -5 (impossible for a ratio)").doesNotContain("%  ");
        assertThat(minusFive).doesNotContain("-500");
        assertThat(line("1", "0", "3.5")).contains("kv 3.5 (impossible for a ratio)");
        // A mean inside [0, 1] does not hide an impossible sample.
        assertThat(line("1", "0", "0.2", "1.6"))
                .contains("kv 90.0 % (max 1.6 is impossible for a ratio)");
    }

    @Test
    void aNegativeCountIsFlagged() {
        assertThat(line("-3", "0", "0.1")).contains("running -3.00 (impossible for a count)");
    }

    @Test
    void nanIsShownAsNanWithANoteNotDropped() {
        assertThat(line("1", "0", "NaN", "NaN", "NaN"))
                .contains("kv NaN (the server reported NaN in all 3 samples)");
        assertThat(line("1", "0", "NaN", "0.5")).contains("kv 50.0 % (1 NaN sample left out)");
        assertThat(line("NaN", "0", "0.5"))
                .contains("running NaN (the server reported NaN in its only sample)");
    }
}
