package io.inferencebench.runner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.Backend;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.runner.backend.RequestFields;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ignore_eos, an extension, is sent by default except to the openai backend, whose requests carry
 * OpenAI's fields only; an explicit workload.ignoreEos wins on both roads.
 */
class IgnoreEosDefaultTest {

    private static RunPlan commandLine(String backend, Boolean ignoreEos) {
        WorkloadSpec w = new WorkloadSpec();
        w.setIgnoreEos(ignoreEos);
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setNumPrompts(10);
        return PlanResolver.resolve(
                new PlanTarget(backend, null, null, "m", null, null),
                w,
                load,
                null,
                new PlanResolver.Road(
                        "", new WireProtocol.Fields("--backend", "--api", "--endpoint"), false));
    }

    private static RunPlan pod(Backend backend, Boolean ignoreEos) {
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        TargetSpec target = new TargetSpec();
        target.setUrl("http://server:8000");
        target.setBackend(backend);
        spec.setTarget(target);
        WorkloadSpec w = new WorkloadSpec();
        w.setIgnoreEos(ignoreEos);
        spec.setWorkload(w);
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setNumPrompts(10);
        spec.setLoad(load);
        return PlanResolver.resolve(spec, PlanResolver.Road.pod());
    }

    @Test
    void openaiSendsOnlyOpenAiFieldsUnlessAsked() {
        assertThat(new WorkloadSpec().getIgnoreEos())
                .as("no Java default: unset means 'by backend'")
                .isNull();
        assertThat(commandLine("openai", null).ignoreEos()).isFalse();
        assertThat(commandLine("openai-chat", null).ignoreEos()).isFalse();
        assertThat(commandLine("openai", true).ignoreEos()).isTrue();
        assertThat(pod(Backend.OPENAI, null).ignoreEos()).isFalse();
        assertThat(pod(Backend.OPENAI, true).ignoreEos()).isTrue();
        assertThat(
                        RequestFields.extensions(
                                "chat", commandLine("openai-chat", null).generation("m")))
                .isEmpty();
    }

    @Test
    void otherBackendsKeepIgnoreEosByDefault() {
        for (String backend : List.of("vllm", "sglang", "tgi", "lmdeploy", "trtllm", "triton")) {
            assertThat(commandLine(backend, null).ignoreEos()).as(backend).isTrue();
            assertThat(commandLine(backend, false).ignoreEos()).as(backend).isFalse();
        }
        assertThat(pod(Backend.VLLM, null).ignoreEos()).isTrue();
        assertThat(pod(null, null).ignoreEos()).as("the spec's default backend is vllm").isTrue();
        assertThat(
                        RequestFields.extensions(
                                "completions", commandLine("vllm", null).generation("m")))
                .containsExactly(RequestFields.IGNORE_EOS);
        // TGI's native API is not OpenAI's: nothing there is an extension of it
        assertThat(RequestFields.extensions("generate", commandLine("tgi", null).generation("m")))
                .isEmpty();
    }

    @Test
    void aRefusalNamingAnExtensionGetsTheFlagThatDropsIt() {
        List<RequestFields.Extension> sent = List.of(RequestFields.IGNORE_EOS, RequestFields.TOP_K);
        String pydantic =
                "HTTP 422: {\"detail\":[{\"type\":\"extra_forbidden\",\"loc\":[\"body\",\"top_k\"],"
                        + "\"msg\":\"Extra inputs are not permitted\",\"input\":5}]}";
        assertThat(RequestFields.refusalHint(pydantic, sent))
                .isEqualTo(
                        "the server refuses a field outside OpenAI's API: top_k (drop it by"
                                + " leaving out --top-k (workload.sampling.topK))");
        assertThat(RequestFields.refusalHint("HTTP 400: unknown field `ignore_eos`", sent))
                .contains(
                        "ignore_eos (drop it with --ignore-eos false (workload.ignoreEos: false))")
                .doesNotContain("top_k");
        // refused without naming the field: every extension sent is a suspect
        assertThat(RequestFields.refusalHint("HTTP 422: Extra inputs are not permitted", sent))
                .contains("these requests carry some: ignore_eos")
                .contains("top_k");
        // about something else, or nothing sent beyond OpenAI's API: no hint
        assertThat(RequestFields.refusalHint("HTTP 400: max_tokens too large", sent)).isNull();
        assertThat(RequestFields.refusalHint("HTTP 404: model_ignore_eos_x", sent)).isNull();
        assertThat(RequestFields.refusalHint(pydantic, List.of())).isNull();
    }
}
