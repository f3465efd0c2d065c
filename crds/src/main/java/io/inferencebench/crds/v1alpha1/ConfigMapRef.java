package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/** A whole ConfigMap in the same namespace. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ConfigMapRef {

    @JsonPropertyDescription("Name of the ConfigMap, in the same namespace.")
    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String name;

    public ConfigMapRef() {}

    public ConfigMapRef(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConfigMapRef that && Objects.equals(name, that.name);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(name);
    }
}
