package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;

/** One container of a target pod. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TargetImage {

    @JsonPropertyDescription("Pod name.")
    private String pod;

    @JsonPropertyDescription("Container name.")
    private String container;

    @JsonPropertyDescription("Image as in the pod spec.")
    private String image;

    @JsonPropertyDescription("Image as the node resolved it (pod status imageID, with digest).")
    private String imageID;

    public TargetImage() {}

    public TargetImage(String pod, String container, String image, String imageID) {
        this.pod = pod;
        this.container = container;
        this.image = image;
        this.imageID = imageID;
    }

    public String getPod() {
        return pod;
    }

    public void setPod(String pod) {
        this.pod = pod;
    }

    public String getContainer() {
        return container;
    }

    public void setContainer(String container) {
        this.container = container;
    }

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public String getImageID() {
        return imageID;
    }

    public void setImageID(String imageID) {
        this.imageID = imageID;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TargetImage that
                && Objects.equals(pod, that.pod)
                && Objects.equals(container, that.container)
                && Objects.equals(image, that.image)
                && Objects.equals(imageID, that.imageID);
    }

    @Override
    public int hashCode() {
        return Objects.hash(pod, container, image, imageID);
    }
}
