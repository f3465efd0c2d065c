package io.inferencebench.profile.prom.bench;

import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

/**
 * Parse-throughput benchmark: builds a vLLM-shaped page of the requested size (histograms with many
 * label sets, gauges, counters, escapes) and parses it repeatedly after a warm-up, printing the
 * median time and throughput. Run with:
 *
 * <pre>
 * ./mvnw -B -o -q -pl profile test-compile exec:java \
 *     -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.inferencebench.profile.prom.bench.ParserBenchmark \
 *     -Dexec.args="10 5 15"
 * </pre>
 *
 * Arguments: page size in MB (default 10), warm-up rounds (5), measured rounds (15).
 */
public final class ParserBenchmark {

    private ParserBenchmark() {}

    /**
     * Builds a synthetic vLLM-like page of at least {@code targetBytes} bytes.
     *
     * @param targetBytes minimum size
     * @return the page text
     */
    public static String page(int targetBytes) {
        StringBuilder sb = new StringBuilder(targetBytes + 4096);
        double[] buckets = {
            0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0
        };
        int series = 0;
        while (sb.length() < targetBytes) {
            String model = "org/model-" + series;
            String labels = "engine=\"" + (series % 8) + "\",model_name=\"" + model + "\"";
            String family = "vllm:time_to_first_token_seconds";
            if (series == 0) {
                sb.append("# HELP ")
                        .append(family)
                        .append(" Histogram of time to first token in seconds.\n");
                sb.append("# TYPE ").append(family).append(" histogram\n");
            }
            long cumulative = 0;
            for (double le : buckets) {
                cumulative += (series * 7L + (long) (le * 13)) % 97;
                sb.append(family)
                        .append("_bucket{")
                        .append(labels)
                        .append(",le=\"")
                        .append(le)
                        .append("\"} ")
                        .append(cumulative)
                        .append(".0\n");
            }
            sb.append(family)
                    .append("_bucket{")
                    .append(labels)
                    .append(",le=\"+Inf\"} ")
                    .append(cumulative)
                    .append(".0\n");
            sb.append(family)
                    .append("_count{")
                    .append(labels)
                    .append("} ")
                    .append(cumulative)
                    .append(".0\n");
            sb.append(family)
                    .append("_sum{")
                    .append(labels)
                    .append("} ")
                    .append(cumulative * 0.123456789)
                    .append('\n');
            sb.append("vllm:kv_cache_usage_perc{")
                    .append(labels)
                    .append("} ")
                    .append((series % 1000) / 1000.0)
                    .append('\n');
            sb.append("vllm:request_success_total{")
                    .append(labels)
                    .append(",finished_reason=\"stop \\\"quoted\\\" \\\\ path\"} ")
                    .append(series * 3)
                    .append(".0\n");
            series++;
        }
        return sb.toString();
    }

    /**
     * Runs the benchmark.
     *
     * @param args size in MB, warm-up rounds, measured rounds
     */
    public static void main(String[] args) {
        int megabytes = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int warmups = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 15;
        byte[] body = page(megabytes * 1024 * 1024).getBytes(StandardCharsets.UTF_8);
        int samples = 0;
        for (int i = 0; i < warmups; i++) {
            samples =
                    PrometheusTextParser.parse(body, PrometheusTextParser.ACCEPT_HEADER)
                            .sampleCount();
        }
        double[] millis = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            ParsedPage page = PrometheusTextParser.parse(body, PrometheusTextParser.ACCEPT_HEADER);
            millis[i] = (System.nanoTime() - t0) / 1e6;
            if (page.problemCount() != 0 || page.sampleCount() != samples) {
                throw new IllegalStateException("unexpected parse result: " + page.problems());
            }
        }
        Arrays.sort(millis);
        double median = millis[rounds / 2];
        double mb = body.length / (1024.0 * 1024.0);
        System.out.printf(
                Locale.ROOT,
                "page %.2f MiB, %d samples; parse time min %.1f ms, median %.1f ms, max %.1f ms;"
                        + " median throughput %.1f MiB/s (%d rounds after %d warm-ups)%n",
                mb,
                samples,
                millis[0],
                median,
                millis[rounds - 1],
                mb / (median / 1000.0),
                rounds,
                warmups);
    }
}
