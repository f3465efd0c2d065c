package io.inferencebench.crds.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

    @Test
    void parsesSingleAndCompoundUnits() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("60s")).isEqualTo(Duration.ofSeconds(60));
        assertThat(Durations.parse("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Durations.parse("1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("0.25ms")).isEqualTo(Duration.ofNanos(250_000));
        assertThat(Durations.parse("1m1s1ms")).isEqualTo(Duration.ofMillis(61_001));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "5", "5x", "-5s", "5 s", "s", "1d", "5sec", "1.s", ".5s", "5us"})
    void rejectsMalformedTextNamingTheField(String text) {
        assertThat(Durations.validate("spec.load.cooldown", text))
                .hasValueSatisfying(
                        message ->
                                assertThat(message)
                                        .startsWith("spec.load.cooldown")
                                        .contains("500ms"));
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rejectsValuesBeyondLongNanoseconds() {
        assertThat(Durations.validate("x", "9999999h")).isPresent();
    }

    @Test
    void formatRoundTrips() {
        for (String text :
                new String[] {"500ms", "60s", "5m", "1h30m", "1m1s1ms", "0s", "0.25ms"}) {
            Duration parsed = Durations.parse(text);
            assertThat(Durations.parse(Durations.format(parsed))).isEqualTo(parsed);
        }
        assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("1m30s");
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
    }

    @Test
    void patternConstantMatchesParser() {
        assertThat("1h30m".matches(Durations.PATTERN)).isTrue();
        assertThat("1d".matches(Durations.PATTERN)).isFalse();
    }
}
