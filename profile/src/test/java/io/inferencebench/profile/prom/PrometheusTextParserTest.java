package io.inferencebench.profile.prom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.inferencebench.profile.prom.PrometheusTextParser.Format;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

class PrometheusTextParserTest {

    static String resource(String name) throws Exception {
        try (InputStream in =
                PrometheusTextParserTest.class.getResourceAsStream("/pages/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void parsesTheReferenceVllmPage() throws Exception {
        ParsedPage page = PrometheusTextParser.parse(resource("vllm-metrics-v0.2-sample.txt"));
        assertThat(page.problems()).isEmpty();
        assertThat(page.format()).isEqualTo(Format.TEXT_0_0_4);
        assertThat(page.families()).hasSize(11);
        assertThat(page.sampleCount()).isEqualTo(10);
        MetricFamily cache = page.family("vllm:gpu_cache_usage_perc");
        assertThat(cache.type()).isEqualTo(MetricType.GAUGE);
        assertThat(cache.help()).isEqualTo("GPU KV-cache usage. 1 means 100 percent usage.");
        assertThat(cache.samples()).hasSize(1);
        assertThat(cache.samples().get(0).value()).isEqualTo(0.002364273204903678);
        assertThat(cache.samples().get(0).labels())
                .containsExactly(Map.entry("model_name", "facebook/opt-125m"));
        MetricFamily status = page.family("status_codes_counter");
        assertThat(status.type()).isEqualTo(MetricType.COUNTER);
        assertThat(status.samples().get(0).label("status_code")).isEqualTo("200");
        // declared but never observed
        assertThat(page.family("exceptions_total_counter").samples()).isEmpty();
    }

    private static final String HISTOGRAM_PAGE =
            """
            # HELP vllm:e2e_request_latency_seconds Histogram of end to end request latency in seconds.
            # TYPE vllm:e2e_request_latency_seconds histogram
            vllm:e2e_request_latency_seconds_bucket{engine="0",le="0.3",model_name="m"} 1.0
            vllm:e2e_request_latency_seconds_bucket{engine="0",le="0.5",model_name="m"} 3.0
            vllm:e2e_request_latency_seconds_bucket{le="+Inf",engine="0",model_name="m"} 4.0
            vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 4.0
            vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m"} 1.7
            vllm:e2e_request_latency_seconds_created{engine="0",model_name="m"} 1.7e9
            # HELP vllm:request_success_total Count of successfully processed requests.
            # TYPE vllm:request_success_total counter
            vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 4.0
            # HELP vllm:request_success_created Count of successfully processed requests.
            # TYPE vllm:request_success_created gauge
            vllm:request_success_created{engine="0",finished_reason="length",model_name="m"} 1.7e9
            # HELP rpc_duration_seconds A summary of the RPC duration in seconds.
            # TYPE rpc_duration_seconds summary
            rpc_duration_seconds{quantile="0.5"} 4773
            rpc_duration_seconds{quantile="0.99"} NaN
            rpc_duration_seconds_sum 1.7560473e+07
            rpc_duration_seconds_count 2693
            untyped_thing{a="b"} -Inf 1395066363000
            other_untyped +Inf
            """;

    @Test
    void groupsHistogramsAndSummariesAndDropsCreatedSeries() {
        ParsedPage page = PrometheusTextParser.parse(HISTOGRAM_PAGE);
        assertThat(page.problems()).isEmpty();
        MetricFamily h = page.family("vllm:e2e_request_latency_seconds");
        assertThat(h.type()).isEqualTo(MetricType.HISTOGRAM);
        assertThat(h.samples())
                .extracting(Sample::name)
                .containsExactly(
                        "vllm:e2e_request_latency_seconds_bucket",
                        "vllm:e2e_request_latency_seconds_bucket",
                        "vllm:e2e_request_latency_seconds_bucket",
                        "vllm:e2e_request_latency_seconds_count",
                        "vllm:e2e_request_latency_seconds_sum");
        assertThat(h.samples().get(2).label("le")).isEqualTo("+Inf");
        assertThat(page.families()).doesNotContainKey("vllm:e2e_request_latency_seconds_created");
        assertThat(page.families()).doesNotContainKey("vllm:request_success_created");
        assertThat(page.family("vllm:request_success").type()).isEqualTo(MetricType.COUNTER);
        assertThat(page.family("vllm:request_success_total").samples()).hasSize(1);

        MetricFamily summary = page.family("rpc_duration_seconds");
        assertThat(summary.type()).isEqualTo(MetricType.SUMMARY);
        assertThat(summary.samples()).hasSize(4);
        assertThat(summary.samples().get(1).value()).isNaN();
        assertThat(summary.samples().get(2).value()).isEqualTo(1.7560473e+07);

        Sample untyped = page.family("untyped_thing").samples().get(0);
        assertThat(page.family("untyped_thing").type()).isEqualTo(MetricType.UNKNOWN);
        assertThat(untyped.value()).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(untyped.timestampMillis()).isEqualTo(1395066363000L);
        assertThat(page.family("other_untyped").samples().get(0).value())
                .isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(page.sampleCount()).isEqualTo(12);
    }

    @Test
    void parsesOpenMetricsWithUnitsSecondsTimestampsExemplarsAndEof() {
        String page =
                """
                # TYPE acme_http_router_request_seconds summary
                # UNIT acme_http_router_request_seconds seconds
                # HELP acme_http_router_request_seconds Latency though all of ACME's \\"routers\\".
                acme_http_router_request_seconds_sum{path="/api/v1",method="GET"} 9036.32 1520879607.789
                acme_http_router_request_seconds_count{path="/api/v1",method="GET"} 807283.0
                acme_http_router_request_seconds_created{path="/api/v1",method="GET"} 1605281325.0
                # TYPE foo counter
                foo_total 17.0 1520879607.789 # {trace_id="KOO5S4vxi0o"} 0.67
                foo_created 1520430000.123
                # TYPE hist histogram
                hist_bucket{le="0.01"} 0
                hist_bucket{le="+Inf"} 17 # {trace_id="oHg5SJYRHA0"} 9.8 1520879607.789
                hist_count 17
                hist_sum 324789.3
                # TYPE build info
                build_info{version="1.2"} 1
                # EOF
                """;
        ParsedPage parsed = PrometheusTextParser.parse(page);
        assertThat(parsed.format()).isEqualTo(Format.OPENMETRICS_1_0);
        assertThat(parsed.problems()).isEmpty();
        MetricFamily summary = parsed.family("acme_http_router_request_seconds");
        assertThat(summary.unit()).isEqualTo("seconds");
        assertThat(summary.help()).isEqualTo("Latency though all of ACME's \"routers\".");
        assertThat(summary.samples()).hasSize(2);
        assertThat(summary.samples().get(0).timestampMillis()).isEqualTo(1520879607789L);
        assertThat(summary.samples().get(0).labels())
                .containsExactly(Map.entry("path", "/api/v1"), Map.entry("method", "GET"));
        MetricFamily foo = parsed.family("foo");
        assertThat(foo.type()).isEqualTo(MetricType.COUNTER);
        assertThat(foo.samples()).singleElement().extracting(Sample::value).isEqualTo(17.0);
        assertThat(parsed.family("foo_total")).isSameAs(foo);
        assertThat(parsed.family("hist").samples()).hasSize(4);
        assertThat(parsed.family("build").type()).isEqualTo(MetricType.INFO);
        assertThat(parsed.family("build").samples()).hasSize(1);
    }

    @Test
    void unescapesLabelValuesAndHelpText() {
        String page =
                "# HELP m Help with \\\\ backslash and \\n newline.\n"
                        + "# TYPE m gauge\n"
                        + "m{path=\"C:\\\\dir\\\\file\",quote=\"say \\\"hi\\\"\",multi=\"a\\nb\",empty=\"\"} 1\n"
                        + "m{ spaced = \"x\" , trailing=\"comma\", } 2\n";
        ParsedPage parsed = PrometheusTextParser.parse(page);
        assertThat(parsed.problems()).isEmpty();
        MetricFamily m = parsed.family("m");
        assertThat(m.help()).isEqualTo("Help with \\ backslash and \n newline.");
        Map<String, String> labels = m.samples().get(0).labels();
        assertThat(labels.get("path")).isEqualTo("C:\\dir\\file");
        assertThat(labels.get("quote")).isEqualTo("say \"hi\"");
        assertThat(labels.get("multi")).isEqualTo("a\nb");
        assertThat(labels.get("empty")).isEmpty();
        assertThat(m.samples().get(1).labels())
                .containsExactly(Map.entry("spaced", "x"), Map.entry("trailing", "comma"));
    }

    @Test
    void acceptsCrlfLineEndsAndBlankLines() {
        String page = "# TYPE a gauge\r\na 1\r\n\r\n# TYPE b counter\r\nb_total{x=\"y\"} 2\r\n";
        ParsedPage parsed = PrometheusTextParser.parse(page);
        assertThat(parsed.problems()).isEmpty();
        assertThat(parsed.family("a").samples().get(0).value()).isEqualTo(1.0);
        assertThat(parsed.family("b_total").samples().get(0).label("x")).isEqualTo("y");
    }

    @Test
    void detectsAndInflatesGzip() throws Exception {
        byte[] plain = HISTOGRAM_PAGE.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            gz.write(plain);
        }
        ParsedPage parsed =
                PrometheusTextParser.parse(bytes.toByteArray(), "text/plain; version=0.0.4");
        assertThat(parsed.problems()).isEmpty();
        assertThat(parsed.sampleCount()).isEqualTo(12);

        byte[] truncated = java.util.Arrays.copyOf(bytes.toByteArray(), 20);
        ParsedPage broken = PrometheusTextParser.parse(truncated, null);
        assertThat(broken.families()).isEmpty();
        assertThat(broken.problems())
                .singleElement()
                .satisfies(p -> assertThat(p.message()).contains("gzip"));
    }

    @Test
    void formatFollowsTheContentType() {
        String page = "a 1 1700000000.5\n";
        assertThat(
                        PrometheusTextParser.parse(
                                        page.getBytes(StandardCharsets.UTF_8),
                                        "application/openmetrics-text; version=1.0.0; charset=utf-8")
                                .family("a")
                                .samples()
                                .get(0)
                                .timestampMillis())
                .isEqualTo(1700000000500L);
        // the same line is malformed in 0.0.4, whose timestamps are integer milliseconds
        ParsedPage text =
                PrometheusTextParser.parse(page.getBytes(StandardCharsets.UTF_8), "text/plain");
        assertThat(text.problems())
                .singleElement()
                .satisfies(p -> assertThat(p.message()).contains("timestamp"));
    }

    @Test
    void reportsMalformedLinesWithLineNumbersAndKeepsTheRest() {
        String page =
                String.join(
                        "\n",
                        "# TYPE good gauge", // 1
                        "good 1", // 2
                        "bad_no_value", // 3
                        "bad{unterminated=\"x} 1", // 4
                        "bad{escape=\"\\q\"} 1", // 5
                        "bad{dup=\"a\",dup=\"b\"} 1", // 6
                        "bad{1x=\"a\"} 1", // 7
                        "bad 1f", // 8
                        "bad 0x10", // 9
                        "bad 1 12.5", // 10
                        "bad 1 2 3", // 11
                        "9bad 1", // 12
                        "bad-name 1", // 13
                        "# TYPE weird sometype", // 14
                        "good 2 -5", // 15
                        "# TYPE good counter", // 16
                        "bad{a=b} 1", // 17
                        "bad{a=\"b\" c=\"d\"} 1", // 18
                        "# HELP", // 19
                        "# TYPE hist histogram", // 20
                        "hist_bucket{x=\"1\"} 3", // 21
                        "good   3", // 22
                        "ünicode 1", // 23
                        "good{} 4"); // 24
        ParsedPage parsed = PrometheusTextParser.parse(page);
        assertThat(parsed.problems())
                .extracting(ParseProblem::line)
                .containsExactly(3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19, 21, 23);
        assertThat(parsed.problemCount()).isEqualTo(18);
        assertThat(parsed.problems().get(0).message()).contains("missing value");
        assertThat(parsed.problems().get(2).message()).contains("invalid escape");
        assertThat(parsed.problems().get(3).message()).contains("duplicate label dup");
        assertThat(parsed.problems().get(11).message()).contains("unknown metric type 'sometype'");
        assertThat(parsed.problems().get(12).message()).contains("second TYPE");
        assertThat(parsed.problems().get(16).message()).contains("le");
        assertThat(parsed.problems().get(0).excerpt()).isEqualTo("bad_no_value");
        assertThat(parsed.family("good").samples())
                .extracting(Sample::value)
                .containsExactly(1.0, 2.0, 3.0, 4.0);
        assertThat(parsed.family("good").samples().get(1).timestampMillis()).isEqualTo(-5L);
        assertThat(parsed.families()).doesNotContainKey("bad");
    }

    @Test
    void contentAfterEofIsReportedOnce() {
        ParsedPage parsed =
                PrometheusTextParser.parse("a 1\n# EOF\nb 2\nc 3\n", Format.OPENMETRICS_1_0);
        assertThat(parsed.family("a")).isNotNull();
        assertThat(parsed.family("b")).isNull();
        assertThat(parsed.problems()).extracting(ParseProblem::line).containsExactly(3);
    }

    @Test
    void keepsAtMostMaxProblemsButCountsAll() {
        String page = "garbage line\n".repeat(PrometheusTextParser.MAX_PROBLEMS + 50);
        ParsedPage parsed = PrometheusTextParser.parse(page);
        assertThat(parsed.problems()).hasSize(PrometheusTextParser.MAX_PROBLEMS);
        assertThat(parsed.problemCount()).isEqualTo(PrometheusTextParser.MAX_PROBLEMS + 50);
    }

    @Test
    void randomBytesNeverThrow() {
        Random random = new Random(42);
        String alphabet = "ab_:{}=\",\\ \n\r#\t0123456789.+-eEInfNa\u00e9TYPEHELPgauge";
        for (int round = 0; round < 2_000; round++) {
            StringBuilder sb = new StringBuilder();
            int len = random.nextInt(200);
            for (int i = 0; i < len; i++) {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String text = sb.toString();
            assertThatCode(() -> PrometheusTextParser.parse(text)).doesNotThrowAnyException();
            byte[] raw = new byte[random.nextInt(64)];
            random.nextBytes(raw);
            if (raw.length > 2 && round % 3 == 0) {
                raw[0] = 0x1f;
                raw[1] = (byte) 0x8b;
            }
            assertThatCode(() -> PrometheusTextParser.parse(raw, null)).doesNotThrowAnyException();
        }
    }

    @Test
    void parsesGoFloatSpellings() {
        assertThat(PrometheusTextParser.parseFloat("1e3")).isEqualTo(1000.0);
        assertThat(PrometheusTextParser.parseFloat("-0.5")).isEqualTo(-0.5);
        assertThat(PrometheusTextParser.parseFloat("+Inf")).isInfinite();
        assertThat(PrometheusTextParser.parseFloat("-inf")).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(PrometheusTextParser.parseFloat("Infinity")).isInfinite();
        assertThat(PrometheusTextParser.parseFloat("NaN")).isNaN();
        assertThat(PrometheusTextParser.parseFloat("1f")).isNaN();
        assertThat(PrometheusTextParser.parseFloat("1d")).isNaN();
        assertThat(PrometheusTextParser.parseFloat("")).isNaN();
        assertThat(List.of("nan", "NAN", "NaN"))
                .allSatisfy(s -> assertThat(PrometheusTextParser.parseFloat(s)).isNaN());
    }

    @Test
    void fastDecimalPathAgreesWithTheGeneralParser() {
        Random random = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            String text;
            switch (i % 4) {
                case 0 -> text = Long.toString(random.nextLong() % 1_000_000_000_000_000L);
                case 1 ->
                        text =
                                Double.toString(
                                        random.nextDouble() * Math.pow(10, random.nextInt(12)));
                case 2 ->
                        text = String.format(java.util.Locale.ROOT, "%.6f", random.nextGaussian());
                default -> text = "0." + "0".repeat(random.nextInt(25)) + (1 + random.nextInt(999));
            }
            char[] chars = text.toCharArray();
            double fast = PrometheusTextParser.fastDecimal(chars, 0, chars.length);
            if (!Double.isNaN(fast)) {
                assertThat(fast).as(text).isEqualTo(Double.parseDouble(text));
            }
            assertThat(PrometheusTextParser.parseFloat(text))
                    .as(text)
                    .isEqualTo(Double.parseDouble(text));
        }
        assertThat(PrometheusTextParser.fastDecimal("12.5".toCharArray(), 0, 4)).isEqualTo(12.5);
        assertThat(PrometheusTextParser.fastDecimal("1e3".toCharArray(), 0, 3)).isNaN();
        assertThat(PrometheusTextParser.fastDecimal("-".toCharArray(), 0, 1)).isNaN();
    }

    @Test
    void acceptsQuotedUtf8MetricAndLabelNames() {
        String page =
                String.join(
                        "\n",
                        "# HELP \"my.dotted.metric\" A metric with dots.",
                        "# TYPE \"my.dotted.metric\" histogram",
                        "{\"my.dotted.metric_bucket\", \"service.name\"=\"api\", le=\"1\"} 3",
                        "{\"my.dotted.metric_bucket\", \"service.name\"=\"api\", le=\"+Inf\"} 4",
                        "{\"my.dotted.metric_count\", \"service.name\"=\"api\"} 4",
                        "{\"plain_name\"} 7",
                        "{\"a\", \"b\"} 1",
                        "{x=\"y\"} 1",
                        "plain_name{\"q\"} 1");
        ParsedPage parsed = PrometheusTextParser.parse(page);
        MetricFamily dotted = parsed.family("my.dotted.metric");
        assertThat(dotted.type()).isEqualTo(MetricType.HISTOGRAM);
        assertThat(dotted.help()).isEqualTo("A metric with dots.");
        assertThat(dotted.samples()).hasSize(3);
        assertThat(dotted.samples().get(0).label("service.name")).isEqualTo("api");
        assertThat(parsed.family("plain_name").samples())
                .singleElement()
                .extracting(Sample::value)
                .isEqualTo(7.0);
        assertThat(parsed.problems()).extracting(ParseProblem::line).containsExactly(7, 8, 9);
    }
}
