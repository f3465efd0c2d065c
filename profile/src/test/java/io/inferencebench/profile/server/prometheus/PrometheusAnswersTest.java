package io.inferencebench.profile.server.prometheus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Reading the values in Prometheus' answers. */
class PrometheusAnswersTest {

    @Test
    void decodesNanAndInfinitiesWrittenAsStrings() {
        assertThat(PrometheusAnswers.parseValue("NaN")).isNaN();
        assertThat(PrometheusAnswers.parseValue("+Inf")).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(PrometheusAnswers.parseValue("-Inf")).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(PrometheusAnswers.parseValue("1e-3")).isEqualTo(0.001);
        assertThatThrownBy(() -> PrometheusAnswers.parseValue("x"))
                .isInstanceOf(NumberFormatException.class);
    }
}
