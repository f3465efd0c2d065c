package io.inferencebench.operator;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.quarkus.kubernetes.client.KubernetesClientObjectMapperCustomizer;
import jakarta.inject.Singleton;

/**
 * Lets the operator read BenchmarkRuns and BenchmarkSchedules carrying fields its model does not
 * know: a CRD newer than the operator (upgraded first, as the README says) must not stop the
 * informers ("Unrecognized field ... watch failed"). Only the operator's reading is lenient; the
 * runner's {@code --config} keeps refusing misspelled fields.
 */
@Singleton
public class NewerFields implements KubernetesClientObjectMapperCustomizer {

    @Override
    public void customize(ObjectMapper mapper) {
        tolerate(mapper);
    }

    /**
     * Makes a mapper skip unknown properties.
     *
     * @param mapper the Kubernetes client's mapper
     * @return the same mapper
     */
    public static ObjectMapper tolerate(ObjectMapper mapper) {
        return mapper.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    }

    /**
     * A client serialization that skips unknown properties, for a client built outside Quarkus.
     *
     * @return a new serialization
     */
    public static KubernetesSerialization serialization() {
        return new KubernetesSerialization(tolerate(new ObjectMapper()), true);
    }
}
