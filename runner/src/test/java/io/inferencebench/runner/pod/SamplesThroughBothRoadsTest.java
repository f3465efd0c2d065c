package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.runner.plan.WireProtocol;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each sample BenchmarkRun through both roads: the pod's work order (fields as the operator writes
 * them: backend and api wire names, spec.target.path or nothing) and the command line's flags
 * ({@code --backend}, {@code --api} only when the sample sets one, {@code --endpoint}). Both must
 * send the same requests to the same path, and use the same ignore-EOS and cool-down defaults.
 */
class SamplesThroughBothRoadsTest {

    static Stream<Path> samples() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("..", "config", "samples"))) {
            return files
                    .filter(p -> p.toString().endsWith(".yaml"))
                    .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
                    .sorted()
                    .toList()
                    .stream();
        }
    }

    static BenchmarkRunSpec spec(Path sample) throws Exception {
        ObjectMapper yaml =
                new ObjectMapper(new YAMLFactory())
                        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        return yaml.readValue(sample.toFile(), BenchmarkRun.class).getSpec();
    }

    static RunnerWorkOrder workOrder(BenchmarkRunSpec spec) {
        return new RunnerWorkOrder(
                "r",
                "ns",
                "uid",
                1,
                "http://127.0.0.1:1",
                spec.getTarget().getPath(),
                spec.getTarget().getBackend().wireName(),
                spec.getTarget().getApi().wireName(),
                spec.getTarget().getModel(),
                Map.of(),
                false,
                spec.getWorkload(),
                spec.getLoad(),
                StageShares.of(spec.getLoad(), 1),
                spec.getSlo(),
                "r-control",
                "r-part-",
                3);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void bothRoadsSendTheSameRequestsToTheSamePath(Path sample) throws Exception {
        BenchmarkRunSpec spec = spec(sample);
        boolean stream = !Boolean.FALSE.equals(spec.getWorkload().getStreaming());
        String sampleText = Files.readString(sample);
        String apiFlag =
                sampleText.lines().anyMatch(l -> l.trim().startsWith("api:"))
                        ? spec.getTarget().getApi().wireName()
                        : null;
        WireProtocol pod = PodWorkload.protocol(workOrder(spec), stream);
        WireProtocol cli =
                WireProtocol.resolve(
                        spec.getTarget().getBackend().wireName(),
                        apiFlag,
                        spec.getTarget().getPath(),
                        stream,
                        new WireProtocol.Fields("--backend", "--api", "--endpoint"));
        assertThat(pod.protocol().getClass()).isEqualTo(cli.protocol().getClass());
        assertThat(pod.path()).isEqualTo(cli.path());
        assertThat(pod.backend()).isEqualTo(cli.backend());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void defaultsComeFromTheSpecWhicheverSectionsAreGiven(Path sample) throws Exception {
        BenchmarkRunSpec spec = spec(sample);
        // What the CLI uses without --config (fresh sections) equals the CRD's defaults the pod
        // gets when the sample leaves them out.
        if (!Files.readString(sample).contains("ignoreEos")) {
            assertThat(spec.getWorkload().getIgnoreEos())
                    .isEqualTo(new WorkloadSpec().getIgnoreEos());
        }
        if (!Files.readString(sample).contains("cooldown")) {
            assertThat(spec.getLoad().getCooldown()).isEqualTo(new LoadSpec().getCooldown());
        }
    }

    @org.junit.jupiter.api.Test
    void tgiWithTheSpecsDefaultApiSendsTgiNativeRequestsAsTheCliDoes() {
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        var target = new io.inferencebench.crds.v1alpha1.TargetSpec();
        target.setUrl("http://tgi:8080");
        target.setBackend(io.inferencebench.crds.v1alpha1.Backend.TGI);
        spec.setTarget(target);
        spec.setWorkload(new WorkloadSpec());
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setNumPrompts(10);
        spec.setLoad(load);
        WireProtocol pod = PodWorkload.protocol(workOrder(spec), true);
        WireProtocol cli =
                WireProtocol.resolve(
                        "tgi",
                        null,
                        null,
                        true,
                        new WireProtocol.Fields("--backend", "--api", "--endpoint"));
        // Before, backend: tgi in a BenchmarkRun sent /v1/completions.
        assertThat(pod.path()).isEqualTo("/generate_stream").isEqualTo(cli.path());
        assertThat(pod.protocol().name()).isEqualTo(cli.protocol().name());
    }
}
