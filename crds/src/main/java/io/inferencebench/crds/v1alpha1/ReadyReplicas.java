package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/** Ready endpoints of the target over the run. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ReadyReplicas {

    @JsonPropertyDescription("Fewest ready endpoints seen.")
    private Integer min;

    @JsonPropertyDescription("Most ready endpoints seen.")
    private Integer max;

    @JsonPropertyDescription(
            "The count at the first sample and at every change: 'RFC3339=count', in time order.")
    private List<String> changes;

    public Integer getMin() {
        return min;
    }

    public void setMin(Integer min) {
        this.min = min;
    }

    public Integer getMax() {
        return max;
    }

    public void setMax(Integer max) {
        this.max = max;
    }

    public List<String> getChanges() {
        return changes;
    }

    public void setChanges(List<String> changes) {
        this.changes = changes;
    }
}
