package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.StageSummary;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoadBalancedConditionTest {

    private static StageSummary stage(int n, String shares, Boolean balanced, String message) {
        StageSummary s = new StageSummary();
        s.setStage(n);
        s.setReplicaShares(shares);
        s.setLoadBalanced(balanced);
        s.setLoadBalancedMessage(message);
        return s;
    }

    @Test
    void noReplicaSharesNoCondition() {
        assertThat(LoadBalancedCondition.of(null)).isNull();
        assertThat(LoadBalancedCondition.of(List.of(stage(1, null, null, null)))).isNull();
    }

    @Test
    void anUnevenStageMakesItFalseNamingItsFigures() {
        LoadBalancedCondition c =
                LoadBalancedCondition.of(
                        List.of(
                                stage(1, "34/33/33 %", true, null),
                                stage(2, "46/29/25 %", false, "replica a served 220, 1.83x")));
        assertThat(c.status()).isEqualTo("False");
        assertThat(c.reason()).isEqualTo("Uneven");
        assertThat(c.message())
                .startsWith("stage 2 (46/29/25 %): replica a served 220, 1.83x;")
                .contains("spec.target.balance: endpoints");
    }

    @Test
    void evenWhereJudgedUnknownWhereNothingCouldBe() {
        LoadBalancedCondition even =
                LoadBalancedCondition.of(
                        List.of(
                                stage(
                                        1,
                                        "50/50 %",
                                        null,
                                        "10 requests per replica: fewer than 100"),
                                stage(2, "51/49 %", true, null)));
        assertThat(even.status()).isEqualTo("True");
        assertThat(even.message())
                .isEqualTo(
                        "1 of 2 stages judged even; stage 1 (50/50 %): 10 requests per replica:"
                                + " fewer than 100");
        LoadBalancedCondition unknown =
                LoadBalancedCondition.of(List.of(stage(1, "50/50 %", null, "too few")));
        assertThat(unknown.status()).isEqualTo("Unknown");
        assertThat(unknown.reason()).isEqualTo("TooFewRequests");
    }
}
