package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/** A file on a PersistentVolumeClaim, mounted read-only into the runner pods. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PvcFileRef {

    @JsonPropertyDescription("Name of the PersistentVolumeClaim in the BenchmarkRun's namespace.")
    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String claimName;

    @JsonPropertyDescription(
            "Path of the file relative to the volume root, e.g. datasets/sharegpt.json. No '..'"
                    + " segments and no leading '/'.")
    @Required
    @Size(min = 1, max = 1024)
    @Pattern("^[^/](.*[^/])?$")
    private String path;

    public PvcFileRef() {}

    public PvcFileRef(String claimName, String path) {
        this.claimName = claimName;
        this.path = path;
    }

    public String getClaimName() {
        return claimName;
    }

    public void setClaimName(String claimName) {
        this.claimName = claimName;
    }

    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PvcFileRef that
                && Objects.equals(claimName, that.claimName)
                && Objects.equals(path, that.path);
    }

    @Override
    public int hashCode() {
        return Objects.hash(claimName, path);
    }
}
