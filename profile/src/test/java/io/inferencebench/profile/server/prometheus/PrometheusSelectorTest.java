package io.inferencebench.profile.server.prometheus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusSelectorTest {

    @Test
    void parsesMatchersWithAndWithoutBraces() {
        PrometheusSelector s =
                PrometheusSelector.parse(" { namespace = \"llm\", service!='x', job=~`vllm-.*` } ");
        assertThat(s.matchers())
                .containsExactly(
                        new PrometheusSelector.Matcher(
                                "namespace", PrometheusSelector.Op.EQ, "llm"),
                        new PrometheusSelector.Matcher("service", PrometheusSelector.Op.NEQ, "x"),
                        new PrometheusSelector.Matcher("job", PrometheusSelector.Op.RE, "vllm-.*"));
        assertThat(s.render()).isEqualTo("namespace=\"llm\",service!=\"x\",job=~\"vllm-.*\"");
        assertThat(PrometheusSelector.parse("pod!~\"a\\\\.b\"").matchers().get(0).value())
                .isEqualTo("a\\.b");
        assertThat(PrometheusSelector.parse(null).matchers()).isEmpty();
        assertThat(PrometheusSelector.parse("{}").matchers()).isEmpty();
    }

    @Test
    void renderEscapesQuotesAndBackslashesRoundTrip() {
        PrometheusSelector s = PrometheusSelector.ALL.and("a", "x\"y\\z\n");
        assertThat(s.render()).isEqualTo("a=\"x\\\"y\\\\z\\n\"");
        assertThat(PrometheusSelector.parse("{" + s.render() + "}")).isEqualTo(s);
    }

    @Test
    void matchesLabelSetsLikePromql() {
        PrometheusSelector s = PrometheusSelector.parse("{job=~\"sim|vllm\",pod!=\"\"}");
        assertThat(s.matches(Map.of("job", "sim", "pod", "p"))).isTrue();
        assertThat(s.matches(Map.of("job", "simx", "pod", "p"))).isFalse();
        assertThat(s.matches(Map.of("job", "sim"))).isFalse();
    }

    @Test
    void reportsWhatIsWrong() {
        assertThat(PrometheusSelector.problem("vllm:num_requests_running{a=\"b\"}"))
                .contains("metric name");
        assertThat(PrometheusSelector.problem("my_job")).contains("{job=\"my_job\"}");
        assertThat(PrometheusSelector.problem("{a=\"b\"")).contains("missing closing '}'");
        assertThat(PrometheusSelector.problem("{a=b}")).contains("must be quoted");
        assertThat(PrometheusSelector.problem("{a=\"b\" c=\"d\"}")).contains("expected ','");
        assertThat(PrometheusSelector.problem("{__name__=\"x\"}")).contains("__name__");
        assertThat(PrometheusSelector.problem("{a=~\"(\"}")).contains("invalid regular expression");
        assertThat(PrometheusSelector.problem("{a<\"b\"}")).contains("expected =, !=, =~ or !~");
        assertThat(PrometheusSelector.problem("{a=\"b}")).contains("unterminated");
        assertThat(PrometheusSelector.problem("{1a=\"b\"}")).contains("label name");
        assertThat(PrometheusSelector.problem("{a=\"b\"}")).isNull();
        assertThatThrownBy(() -> PrometheusSelector.parse("{a}"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
