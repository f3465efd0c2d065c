package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/** Where a dataset file is read from; exactly one of the fields is set. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value =
                "[has(self.configMapRef), has(self.pvc), has(self.url), has(self.inline)]"
                        + ".filter(x, x).size() == 1",
        message = "exactly one of configMapRef, pvc, url or inline must be set",
        reason = "FieldValueInvalid")
public class DatasetSource {

    /** Largest inline dataset, in characters; bigger data belongs in a ConfigMap or PVC. */
    public static final int MAX_INLINE_LENGTH = 262_144;

    @JsonPropertyDescription(
            "A ConfigMap key holding the dataset file (at most 1 MiB); key defaults to"
                    + " dataset.json for sharegpt and dataset.jsonl for jsonl.")
    private ConfigMapKeyRef configMapRef;

    @JsonPropertyDescription("A file on a PersistentVolumeClaim, mounted read-only.")
    private PvcFileRef pvc;

    @JsonPropertyDescription(
            "An http(s) URL the runner downloads the dataset from before the start barrier.")
    @Size(min = 1, max = 2048)
    @Pattern("^https?://[^\\s/$.?#][^\\s]*$")
    private String url;

    @JsonPropertyDescription(
            "The dataset file content itself (ShareGPT JSON or JSON Lines), for small datasets.")
    @Size(min = 1, max = MAX_INLINE_LENGTH)
    private String inline;

    public ConfigMapKeyRef getConfigMapRef() {
        return configMapRef;
    }

    public void setConfigMapRef(ConfigMapKeyRef configMapRef) {
        this.configMapRef = configMapRef;
    }

    public PvcFileRef getPvc() {
        return pvc;
    }

    public void setPvc(PvcFileRef pvc) {
        this.pvc = pvc;
    }

    public String getUrl() {
        return url;
    }

    public void setUrl(String url) {
        this.url = url;
    }

    public String getInline() {
        return inline;
    }

    public void setInline(String inline) {
        this.inline = inline;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DatasetSource that
                && Objects.equals(configMapRef, that.configMapRef)
                && Objects.equals(pvc, that.pvc)
                && Objects.equals(url, that.url)
                && Objects.equals(inline, that.inline);
    }

    @Override
    public int hashCode() {
        return Objects.hash(configMapRef, pvc, url, inline);
    }
}
