package io.inferencebench.crds.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** WorkloadSpec and LoadSpec read from plain YAML, as the runner's --config does. */
class SpecYamlTest {

    private final ObjectMapper yaml =
            new ObjectMapper(new YAMLFactory())
                    .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    @Test
    void emptyWorkloadHasTheDocumentedDefaults() throws Exception {
        WorkloadSpec workload = yaml.readValue("{}", WorkloadSpec.class);
        assertThat(workload.getStreaming()).isTrue();
        // unset: the runner decides by backend (openai sends only OpenAI API fields)
        assertThat(workload.getIgnoreEos()).isNull();
        assertThat(workload.getSampling().getTemperature()).isZero();
        assertThat(workload.getDataset().getType()).isEqualTo(DatasetType.RANDOM);
        assertThat(workload.getDataset().getSeed()).isZero();
        assertThat(workload.getDataset().resolvedInputTokens())
                .isEqualTo(TokenDistribution.fixed(1024));
        assertThat(workload.getDataset().resolvedOutputTokens())
                .isEqualTo(TokenDistribution.fixed(128));
    }

    @Test
    void readsAFullWorkload() throws Exception {
        WorkloadSpec workload =
                yaml.readValue(
                        """
                        dataset:
                          type: jsonl
                          source: {configMapRef: {name: prompts, key: data.jsonl}}
                          outputTokens: {type: uniform, min: 10, max: 20}
                          maxInputTokens: 2048
                          seed: 7
                          promptField: text
                        tokenizer: {configMapRef: {name: tok}, id: google/gemma-7b}
                        streaming: false
                        sampling: {temperature: 0.7, topP: 0.9}
                        """,
                        WorkloadSpec.class);
        DatasetSpec dataset = workload.getDataset();
        assertThat(dataset.getType()).isEqualTo(DatasetType.JSONL);
        assertThat(dataset.getSource().getConfigMapRef())
                .isEqualTo(new ConfigMapKeyRef("prompts", "data.jsonl"));
        assertThat(dataset.resolvedOutputTokens()).isEqualTo(TokenDistribution.uniform(10, 20));
        assertThat(dataset.getMaxInputTokens()).isEqualTo(2048);
        assertThat(dataset.getSeed()).isEqualTo(7L);
        assertThat(dataset.getPromptField()).isEqualTo("text");
        assertThat(workload.getTokenizer().getConfigMapRef().getKey()).isNull();
        assertThat(workload.getStreaming()).isFalse();
        assertThat(workload.getIgnoreEos()).isNull();
        assertThat(workload.getSampling().getTopP()).isEqualTo(0.9);
    }

    @Test
    void rateSweepExpandsIntoStagesWithSharedSize() throws Exception {
        LoadSpec load =
                yaml.readValue(
                        "requestRates: [1, 5, 10.5]\nnumPrompts: 200\nduration: 60s\n",
                        LoadSpec.class);
        assertThat(load.resolvedStages())
                .containsExactly(
                        StageSpec.rate(1, 200, "60s"),
                        StageSpec.rate(5, 200, "60s"),
                        StageSpec.rate(10.5, 200, "60s"));
        assertThat(load.getArrival()).isEqualTo(ArrivalProcess.POISSON);
        assertThat(load.getBurstiness()).isEqualTo(1.0);
        assertThat(load.getWarmupRequests()).isZero();
        assertThat(load.cooldownValue()).isEqualTo(Duration.ofSeconds(5));
        assertThat(load.requestTimeoutValue()).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void explicitStagesAreKeptInOrder() throws Exception {
        LoadSpec load =
                yaml.readValue(
                        """
                        stages:
                          - {requestRate: 5, numPrompts: 600}
                          - {requestRate: 10, duration: 60s}
                          - {concurrency: 32, numPrompts: 500}
                        arrival: gamma
                        burstiness: 0.5
                        maxConcurrency: 64
                        cooldown: 10s
                        """,
                        LoadSpec.class);
        List<StageSpec> stages = load.resolvedStages();
        assertThat(stages).hasSize(3);
        assertThat(stages.get(0).isOpenLoop()).isTrue();
        assertThat(stages.get(1).durationValue()).isEqualTo(Duration.ofSeconds(60));
        assertThat(stages.get(2).isOpenLoop()).isFalse();
        assertThat(stages.get(2).getConcurrency()).isEqualTo(32);
        assertThat(load.getArrival()).isEqualTo(ArrivalProcess.GAMMA);
        assertThat(load.cooldownValue()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void unknownEnumValueIsRejected() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> yaml.readValue("arrival: bursty\n", LoadSpec.class))
                .isInstanceOf(InvalidFormatException.class)
                .hasMessageContaining("bursty");
    }

    @Test
    void misspelledFieldIsRejectedWhenTheReaderIsStrict() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> yaml.readValue("requestRate: [1]\n", LoadSpec.class))
                .isInstanceOf(UnrecognizedPropertyException.class)
                .hasMessageContaining("requestRate");
    }

    @Test
    void writesEnumsInTheirYamlSpelling() throws Exception {
        LoadSpec load = new LoadSpec();
        load.setArrival(ArrivalProcess.CONSTANT);
        assertThat(yaml.writeValueAsString(load)).contains("arrival: \"constant\"");
        assertThat(yaml.writeValueAsString(Phase.AGGREGATING)).contains("Aggregating");
        assertThat(Phase.AGGREGATING.wireName()).isEqualTo("Aggregating");
    }
}
