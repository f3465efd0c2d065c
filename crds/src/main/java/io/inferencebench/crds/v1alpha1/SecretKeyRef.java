package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A key of a Secret in the BenchmarkRun's namespace. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SecretKeyRef {

    @JsonPropertyDescription("Name of the Secret, in the same namespace as the BenchmarkRun.")
    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String name;

    @JsonPropertyDescription("Key inside the Secret.")
    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.CONFIG_MAP_KEY)
    private String key;

    public SecretKeyRef() {}

    public SecretKeyRef(String name, String key) {
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
}
