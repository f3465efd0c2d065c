package io.inferencebench.profile.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.lpg.PrefixCacheHits;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ColdCacheCheckTest {

    /** Two replicas that each looked up 960 prompt tokens and hit {@code a} and {@code b}. */
    private static PrefixCacheHits twoReplicas(long a, long b) {
        return new PrefixCacheHits(
                a + b,
                1920,
                Map.of(
                        "sim-b", new PrefixCacheHits(b, 960, Map.of()),
                        "sim-a", new PrefixCacheHits(a, 960, Map.of())));
    }

    @Test
    void aColdStageIsVerifiedByEachReplicasOwnCountersInReplicaOrder() {
        ColdCacheCheck.Verification v = ColdCacheCheck.verify(null, twoReplicas(0, 16), true);
        assertThat(v.verified()).isTrue();
        assertThat(v.message()).isNull();
        assertThat(v.hitRates())
                .containsExactly(Map.entry("sim-a", 0.0), Map.entry("sim-b", 16 / 960.0));
    }

    @Test
    void hitsARandomStageCannotProduceContradictTheResetNamingTheReplica() {
        ColdCacheCheck.Verification v = ColdCacheCheck.verify(null, twoReplicas(0, 720), true);
        assertThat(v.verified()).isFalse();
        assertThat(v.message())
                .startsWith("replica sim-b found 75.0 % of its prompt tokens cached (720 of 960)")
                .contains("more than 5 %")
                .doesNotContain("sim-a");
        // At the tolerance itself: a template's block, not a kept cache.
        assertThat(ColdCacheCheck.verify(null, twoReplicas(0, 48), true).verified()).isTrue();
        assertThat(ColdCacheCheck.verify(null, twoReplicas(0, 49), true).verified()).isFalse();
    }

    @Test
    void aWorkloadThatRepeatsPrefixesIsNotHeldToZeroHits() {
        ColdCacheCheck.Verification v = ColdCacheCheck.verify(null, twoReplicas(600, 720), false);
        assertThat(v.verified()).isTrue();
        assertThat(v.hitRates()).hasSize(2);
    }

    @Test
    void anEndpointNotResetIsNotVerifiedWhateverTheCountersSay() {
        ColdCacheCheck.Verification v =
                ColdCacheCheck.verify("10.0.0.7:8000: refused", twoReplicas(0, 0), true);
        assertThat(v.verified()).isFalse();
        assertThat(v.message()).isEqualTo("10.0.0.7:8000: refused");
    }

    @Test
    void withoutCountersNothingIsVerifiedAndOneServerIsItsOwnReplica() {
        ColdCacheCheck.Verification none = ColdCacheCheck.verify(null, null, true);
        assertThat(none.verified()).isNull();
        assertThat(none.hitRates()).isEmpty();
        ColdCacheCheck.Verification one =
                ColdCacheCheck.verify(null, new PrefixCacheHits(720, 960, Map.of()), true);
        assertThat(one.verified()).isFalse();
        assertThat(one.message()).startsWith("replica server found 75.0 %");
        // nothing looked up: no rate, nothing to verify by
        assertThat(
                        ColdCacheCheck.verify(null, new PrefixCacheHits(0, 0, Map.of()), true)
                                .verified())
                .isNull();
    }

    @Test
    void theCountsAProfileHoldsAreReadBack() {
        ObjectNode metrics = new ObjectMapper().createObjectNode();
        ObjectNode cache = metrics.putObject("prefix_cache");
        cache.put("hits", 720).put("queries", 1920).put("hit_rate", 0.375);
        ObjectNode byReplica = cache.putObject("by_replica");
        byReplica.putObject("sim-a").put("hits", 0).put("queries", 960).put("hit_rate", 0.0);
        byReplica.putObject("sim-b").put("hits", 720).put("queries", 960).put("hit_rate", 0.75);
        assertThat(PrefixCacheHits.fromProfile(cache)).isEqualTo(twoReplicas(0, 720));
        assertThat(PrefixCacheHits.fromProfile(metrics.path("missing"))).isNull();
    }
}
