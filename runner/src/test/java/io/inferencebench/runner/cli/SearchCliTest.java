package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.cli.SimServer.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code search} end to end against a model-sim of known capacity: it serves one request at a time
 * ({@code --max-num-seqs 1}), each taking 20 ms to the first token and 7 more tokens 10 ms apart,
 * so it completes at most 1 / 90 ms = 11.1 requests per second; beyond that the queue, and with it
 * TTFT, grows without bound. Constant arrivals make the knee sharp.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class SearchCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private String searchOutput = "";

    private static final double TTFT_MS = 20;
    private static final double ITL_MS = 10;
    private static final int OUTPUT_TOKENS = 8;
    private static final double SERVICE_MS = TTFT_MS + (OUTPUT_TOKENS - 1) * ITL_MS;

    /**
     * One service time of queueing allowed: in a 10 s probe above capacity the queue grows by
     * {@code S - 1/rate} per request, so at 2 % above capacity most requests wait longer than that.
     */
    private static final double SLO_TTFT_MS = TTFT_MS + SERVICE_MS;

    @Test
    void findsTheKnownCapacityWithinThePrecision(@TempDir Path tmp) throws Exception {
        Path results = tmp.resolve("search");
        try (SimServer sim =
                new SimServer(
                        tmp.resolve("sim.log"),
                        "--time-to-first-token",
                        Double.toString(TTFT_MS),
                        "--inter-token-latency",
                        Double.toString(ITL_MS),
                        "--max-num-seqs",
                        "1")) {
            Outcome o =
                    SimServer.cli(
                            "search",
                            "--base-url",
                            sim.baseUrl,
                            "--backend",
                            "openai",
                            // model-sim honours ignore_eos: exact output lengths (openai leaves it
                            // out unless asked)
                            "--ignore-eos",
                            "--model",
                            "sim",
                            "--random-input-len",
                            "16",
                            "--random-output-len",
                            Integer.toString(OUTPUT_TOKENS),
                            "--goodput",
                            "ttft:" + SLO_TTFT_MS,
                            "--slo-min-attainment",
                            "0.8",
                            "--arrival",
                            "constant",
                            "--duration",
                            "10s",
                            "--min-rate",
                            "2",
                            "--max-rate",
                            "64",
                            "--precision",
                            "0.05",
                            "--pause",
                            "500ms",
                            "--result-dir",
                            results.toString());
            searchOutput = o.out() + o.err();
            assertThat(o.code()).as(searchOutput).isZero();
            assertThat(o.out()).contains("capacity: " + results.resolve("capacity.json"));
        }
        JsonNode capacity = JSON.readTree(results.resolve("capacity.json").toFile());
        String context = searchOutput + "\n" + capacity.toPrettyString();
        double passing = capacity.get("passing_rate").asDouble();
        double failing = capacity.get("failing_rate").asDouble();
        // the capacity is the passing rate, but never above what its probes achieved (to four
        // significant digits, as rates are chosen)
        assertThat(capacity.get("max_request_rate").asDouble())
                .isLessThanOrEqualTo(passing)
                .isLessThanOrEqualTo(capacity.get("passing_achieved_rate").asDouble() * (1 + 5e-4))
                .isGreaterThan(passing * 0.98);
        assertThat(capacity.get("outcome").asText()).as(context).isEqualTo("found");
        assertThat(failing / passing - 1).as(context).isLessThanOrEqualTo(0.05);
        assertThat(capacity.get("slo").get("ttft_ms").asDouble()).isEqualTo(SLO_TTFT_MS);

        // The service time the server really had: the e2e latency the client saw at the lowest
        // probed rate, where nothing queues (it includes the loopback and the simulator's own
        // work).
        // every attainment carries its 95 % interval, and the answer states its confidence
        assertThat(capacity.get("confidence").asText()).as(context).contains("at 95 % confidence");
        assertThat(capacity.get("undecided").asBoolean())
                .isEqualTo(capacity.get("confidence").asText().startsWith("undecided"));
        JsonNode first = null;
        for (JsonNode p : capacity.get("probes")) {
            assertThat(Files.exists(results.resolve(p.get("profile").asText()))).isTrue();
            JsonNode interval = p.get("slo_attainment_interval");
            assertThat(interval.get(0).asDouble())
                    .isLessThanOrEqualTo(p.get("slo_attainment").asDouble());
            assertThat(interval.get(1).asDouble())
                    .isGreaterThanOrEqualTo(p.get("slo_attainment").asDouble());
            if (!p.get("load_delivered").asBoolean()) {
                // the client fell behind (a busy machine): such a probe is neither pass nor fail
                assertThat(p.get("passed").isNull()).as(p.toString()).isTrue();
                continue;
            }
            if (first == null
                    || p.get("request_rate").asDouble() < first.get("request_rate").asDouble()) {
                first = p;
            }
        }
        JsonNode lowest = JSON.readTree(results.resolve(first.get("profile").asText()).toFile());
        double observedServiceMs = lowest.get("metrics").get("median_e2el_ms").asDouble();
        assertThat(observedServiceMs).isBetween(SERVICE_MS, SERVICE_MS * 1.1);
        double observedCapacity = 1000 / observedServiceMs;
        double configuredCapacity = 1000 / SERVICE_MS;
        // the bracket holds the capacity, within the precision
        assertThat(passing).as(context).isLessThanOrEqualTo(observedCapacity * 1.05);
        assertThat(failing).as(context).isGreaterThanOrEqualTo(observedCapacity * 0.95);
        assertThat(passing).as(context).isGreaterThanOrEqualTo(configuredCapacity * 0.9);
    }

    @Test
    void badFlagsExitTwoNamingTheFlag(@TempDir Path tmp) {
        assertThat(refused(tmp, "--min-rate 0 --max-rate 10 --goodput ttft:100"))
                .contains("--min-rate")
                .doesNotContain("Exception");
        assertThat(refused(tmp, "--min-rate 1 --max-rate 10")).contains("--goodput");
        assertThat(refused(tmp, "--min-rate 1 --max-rate 10 --goodput ttft:100 --request-rate 5"))
                .contains("--request-rate: search chooses the rates itself");
        assertThat(refused(tmp, "--min-rate 1 --max-rate 10 --goodput latency:100"))
                .contains("--goodput: 'latency:100'");
        // a run flag the probes reject: the first probe's run says which, the search exits 2
        assertThat(refused(tmp, "--min-rate 1 --max-rate 10 --goodput ttft:100 --base-url ftp://x"))
                .contains("--base-url");
    }

    /**
     * {@code search} with {@code flags} (results under {@code tmp}): asserts exit 2, returns
     * stderr.
     */
    private static String refused(Path tmp, String flags) {
        Outcome o = SimServer.cli(argv("search " + flags + " --result-dir %s", tmp));
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        return o.err();
    }
}
