package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.StageSummary;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheStateConditionTest {

    private static StageSummary stage(
            int stage, String state, Boolean verified, String message, Map<String, Double> rates) {
        StageSummary s = new StageSummary();
        s.setStage(stage);
        s.setPrefixCacheState(state);
        s.setPrefixCacheVerified(verified);
        s.setPrefixCacheMessage(message);
        s.setPrefixCacheHitRateByReplica(rates);
        return s;
    }

    private static Map<String, Double> rates(double a, double b) {
        Map<String, Double> rates = new LinkedHashMap<>();
        rates.put("sim-a", a);
        rates.put("sim-b", b);
        return rates;
    }

    @Test
    void noDeclaredStateNoCondition() {
        assertThat(CacheStateCondition.of(List.of(stage(1, null, null, null, rates(0.5, 0.5)))))
                .isNull();
        assertThat(CacheStateCondition.of(null)).isNull();
    }

    @Test
    void everyStageResetAndCountedIsVerifiedWithEachReplicasRate() {
        CacheStateCondition c =
                CacheStateCondition.of(
                        List.of(
                                stage(1, "cold", true, null, rates(0, 0)),
                                stage(2, "cold", true, null, rates(0.125, 0.25))));
        assertThat(c.status()).isEqualTo("True");
        assertThat(c.reason()).isEqualTo("Verified");
        assertThat(c.message())
                .endsWith(
                        "hit rates per replica: stage 1 (sim-a 0.0 %, sim-b 0.0 %); stage 2"
                                + " (sim-a 12.5 %, sim-b 25.0 %)");
    }

    @Test
    void aStageNotResetIsFalseNamingItsEndpointsBeforeAnyOtherFinding() {
        CacheStateCondition c =
                CacheStateCondition.of(
                        List.of(
                                stage(
                                        1,
                                        "cold",
                                        false,
                                        "replica sim-b found 75.0 %",
                                        rates(0, 0.75)),
                                stage(
                                        2,
                                        "undeclared",
                                        false,
                                        "10.0.0.7:8000: POST /reset_prefix_cache answered HTTP 404",
                                        rates(0, 0))));
        assertThat(c.status()).isEqualTo("False");
        assertThat(c.reason()).isEqualTo("NotReset");
        assertThat(c.message())
                .startsWith(
                        "stage 1: replica sim-b found 75.0 %; stage 2: 10.0.0.7:8000: POST"
                                + " /reset_prefix_cache answered HTTP 404;");
    }

    @Test
    void countersContradictingAResetAreUnexpectedHits() {
        CacheStateCondition c =
                CacheStateCondition.of(
                        List.of(
                                stage(1, "cold", true, null, rates(0, 0)),
                                stage(
                                        2,
                                        "cold",
                                        false,
                                        "replica sim-b found 75.0 %",
                                        rates(0, 0.75))));
        assertThat(c.status()).isEqualTo("False");
        assertThat(c.reason()).isEqualTo("UnexpectedHits");
        assertThat(c.message()).startsWith("stage 2: replica sim-b found 75.0 %;");
    }

    @Test
    void resetsWithoutCountersAreUnknown() {
        CacheStateCondition none =
                CacheStateCondition.of(List.of(stage(1, "cold", null, null, null)));
        assertThat(none.status()).isEqualTo("Unknown");
        assertThat(none.reason()).isEqualTo("NoCounters");
        assertThat(none.message()).contains("no stage's prefix-cache counters were read");
        CacheStateCondition some =
                CacheStateCondition.of(
                        List.of(
                                stage(1, "cold", true, null, rates(0, 0)),
                                stage(2, "cold", null, null, null)));
        assertThat(some.status()).isEqualTo("Unknown");
        assertThat(some.message())
                .contains("the prefix-cache counters of stage(s) 2 were not read");
    }
}
