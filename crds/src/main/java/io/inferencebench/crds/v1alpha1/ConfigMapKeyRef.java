package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/** A key of a ConfigMap in the BenchmarkRun's namespace. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ConfigMapKeyRef {

    @JsonPropertyDescription("Name of the ConfigMap, in the same namespace as the BenchmarkRun.")
    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String name;

    @JsonPropertyDescription(
            "Key inside the ConfigMap (data or binaryData). When omitted the field's documented"
                    + " default key is used.")
    @Size(min = 1, max = 253)
    @Pattern(Names.CONFIG_MAP_KEY)
    private String key;

    public ConfigMapKeyRef() {}

    public ConfigMapKeyRef(String name, String key) {
        this.name = name;
        this.key = key;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getKey() {
        return key;
    }

    public void setKey(String key) {
        this.key = key;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConfigMapKeyRef that
                && Objects.equals(name, that.name)
                && Objects.equals(key, that.key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, key);
    }
}
