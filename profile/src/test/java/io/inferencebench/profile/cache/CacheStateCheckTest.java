package io.inferencebench.profile.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.lpg.PrefixCacheHits;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheStateCheckTest {

    private static final CacheStateCheck.Implied COLD = CacheStateCheck.COLD_REUSE_FREE;

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
        CacheStateCheck.Verification v = CacheStateCheck.verify(null, twoReplicas(0, 16), COLD);
        assertThat(v.verified()).isTrue();
        assertThat(v.message()).isNull();
        assertThat(v.hitRates())
                .containsExactly(Map.entry("sim-a", 0.0), Map.entry("sim-b", 16 / 960.0));
    }

    @Test
    void hitsARandomStageCannotProduceContradictTheResetNamingTheReplica() {
        CacheStateCheck.Verification v = CacheStateCheck.verify(null, twoReplicas(0, 720), COLD);
        assertThat(v.verified()).isFalse();
        assertThat(v.message())
                .startsWith("replica sim-b found 75.0 % of its prompt tokens cached (720 of 960)")
                .contains("more than 5 %")
                .doesNotContain("sim-a");
        // At the tolerance itself: a template's block, not a kept cache.
        assertThat(CacheStateCheck.verify(null, twoReplicas(0, 48), COLD).verified()).isTrue();
        assertThat(CacheStateCheck.verify(null, twoReplicas(0, 49), COLD).verified()).isFalse();
    }

    @Test
    void aWorkloadThatRepeatsPrefixesIsNotHeldToZeroHits() {
        CacheStateCheck.Verification v = CacheStateCheck.verify(null, twoReplicas(600, 720), null);
        assertThat(v.verified()).isTrue();
        assertThat(v.hitRates()).hasSize(2);
    }

    @Test
    void anEndpointNotResetIsNotVerifiedWhateverTheCountersSay() {
        CacheStateCheck.Verification v =
                CacheStateCheck.verify("10.0.0.7:8000: refused", twoReplicas(0, 0), COLD);
        assertThat(v.verified()).isFalse();
        assertThat(v.message()).isEqualTo("10.0.0.7:8000: refused");
    }

    @Test
    void withoutCountersNothingIsVerifiedAndOneServerIsItsOwnReplica() {
        CacheStateCheck.Verification none = CacheStateCheck.verify(null, null, COLD);
        assertThat(none.verified()).isNull();
        assertThat(none.hitRates()).isEmpty();
        CacheStateCheck.Verification one =
                CacheStateCheck.verify(null, new PrefixCacheHits(720, 960, Map.of()), COLD);
        assertThat(one.verified()).isFalse();
        assertThat(one.message()).startsWith("replica server found 75.0 %");
        // nothing looked up: no rate, nothing to verify by
        assertThat(
                        CacheStateCheck.verify(null, new PrefixCacheHits(0, 0, Map.of()), COLD)
                                .verified())
                .isNull();
    }

    @Test
    void aWarmStageIsHeldToTheHitsItsWarmedPrefixesImplyLessAPartialBlock() {
        // 100-token prefixes of 120-token prompts: 83.3 % implied, 32 of 120 tokens allowed.
        CacheStateCheck.Implied warm = CacheStateCheck.warmImplied(100, 20);
        assertThat(warm.rate()).isEqualTo(100 / 120.0);
        assertThat(warm.tolerance()).isEqualTo(32 / 120.0);
        // Blocks of 16: 96 of each prompt's 120 tokens found on both replicas.
        CacheStateCheck.Verification v = CacheStateCheck.verify(null, twoReplicas(768, 768), warm);
        assertThat(v.verified()).isTrue();
        assertThat(v.impliedRate()).isEqualTo(100 / 120.0);
        // A replica that caches nothing (prefix caching off, or never warmed) contradicts it.
        v = CacheStateCheck.verify(null, twoReplicas(768, 0), warm);
        assertThat(v.verified()).isFalse();
        assertThat(v.message())
                .startsWith("replica sim-b found 0.0 % of its prompt tokens cached (0 of 960)")
                .contains("less than the 83.3 % implied by more than 26.7 %")
                .contains(
                        "each prompt's prefix (100 of its 120 tokens) was cached before the stage")
                .doesNotContain("sim-a");
        // The bound is 68 of each prompt's 120 tokens: 544 of 960.
        assertThat(CacheStateCheck.verify(null, twoReplicas(545, 545), warm).verified()).isTrue();
        assertThat(CacheStateCheck.verify(null, twoReplicas(545, 543), warm).verified()).isFalse();
        // More than implied (a prompt sent twice finds its suffix too) is no contradiction.
        assertThat(CacheStateCheck.verify(null, twoReplicas(950, 950), warm).verified()).isTrue();
    }

    @Test
    void aCacheNotWarmedIsNotVerifiedWhateverTheCountersSay() {
        CacheStateCheck.Verification v =
                CacheStateCheck.verify(
                        "10.0.0.7:8000: POST /v1/completions answered HTTP 400 after 0 of 8"
                                + " prefixes",
                        twoReplicas(768, 768),
                        CacheStateCheck.warmImplied(100, 20));
        assertThat(v.verified()).isFalse();
        assertThat(v.message()).startsWith("10.0.0.7:8000: POST /v1/completions answered HTTP 400");
        assertThat(v.hitRates()).hasSize(2);
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
