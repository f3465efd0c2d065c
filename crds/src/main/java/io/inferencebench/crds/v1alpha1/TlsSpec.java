package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * How runner pods check an https target's certificate. Without it the certificate must chain to the
 * runner's default trust store and name the target's host.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!(has(self.caConfigMapRef) && has(self.caSecretRef))",
        message = "at most one of caConfigMapRef or caSecretRef may be set",
        reason = "FieldValueInvalid")
@ValidationRule(
        value =
                "!(has(self.insecureSkipVerify) && self.insecureSkipVerify && (has(self.caConfigMapRef) || has(self.caSecretRef)))",
        message = "insecureSkipVerify cannot be combined with a CA (which checks the certificate)",
        fieldPath = ".insecureSkipVerify",
        reason = "FieldValueInvalid")
public class TlsSpec {

    /** Key read from the CA ConfigMap or Secret when none is given. */
    public static final String DEFAULT_CA_KEY = "ca.crt";

    @JsonPropertyDescription(
            "A ConfigMap key holding the PEM CA certificates the target's certificate must chain"
                    + " to (default key ca.crt), instead of the default trust store.")
    private ConfigMapKeyRef caConfigMapRef;

    @JsonPropertyDescription(
            "Like caConfigMapRef, from a Secret (e.g. the ca.crt of a cert-manager Secret).")
    private SecretKeyRef caSecretRef;

    @JsonPropertyDescription(
            "Accept any certificate and host name. Insecure: requests and the API key go to"
                    + " whoever answers. Logged as a warning by every runner pod.")
    private Boolean insecureSkipVerify;

    @JsonPropertyDescription(
            "Name the certificate must carry (also sent as SNI) when it differs from the target's"
                    + " host, e.g. the public name of a server reached through its Service.")
    @Size(min = 1, max = 253)
    @Pattern("^[A-Za-z0-9.-]+$")
    private String serverName;

    public ConfigMapKeyRef getCaConfigMapRef() {
        return caConfigMapRef;
    }

    public void setCaConfigMapRef(ConfigMapKeyRef caConfigMapRef) {
        this.caConfigMapRef = caConfigMapRef;
    }

    public SecretKeyRef getCaSecretRef() {
        return caSecretRef;
    }

    public void setCaSecretRef(SecretKeyRef caSecretRef) {
        this.caSecretRef = caSecretRef;
    }

    public Boolean getInsecureSkipVerify() {
        return insecureSkipVerify;
    }

    public void setInsecureSkipVerify(Boolean insecureSkipVerify) {
        this.insecureSkipVerify = insecureSkipVerify;
    }

    public String getServerName() {
        return serverName;
    }

    public void setServerName(String serverName) {
        this.serverName = serverName;
    }
}
