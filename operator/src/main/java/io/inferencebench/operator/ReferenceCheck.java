package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConfigMapKeyRef;
import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.RunnerSpec;
import io.inferencebench.crds.v1alpha1.SecretKeyRef;
import io.inferencebench.crds.v1alpha1.TlsSpec;
import io.inferencebench.crds.v1alpha1.TokenizerSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks that the objects a run refers to exist: the runner ServiceAccount, the API-key Secret and
 * key, the CA ConfigMap or Secret and key of {@code spec.target.tls}, dataset and tokenizer
 * ConfigMaps and keys, the dataset PersistentVolumeClaim. Returns messages naming the field; Secret
 * values are never read into messages.
 */
public class ReferenceCheck {

    private final KubernetesClient client;

    public ReferenceCheck(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Checks every reference of a run.
     *
     * @param run the run
     * @return problems, empty when all references resolve
     */
    public List<String> check(BenchmarkRun run) {
        String namespace = run.getMetadata().getNamespace();
        List<String> problems = new ArrayList<>();
        // Without it the Job controller cannot create a single runner pod and the run would wait
        // for spec.runner.startTimeout; the runner Role and RoleBinding come with it.
        String serviceAccount = run.getSpec().getRunner().getServiceAccountName();
        if (serviceAccount != null
                && client.serviceAccounts().inNamespace(namespace).withName(serviceAccount).get()
                        == null) {
            problems.add(
                    "spec.runner.serviceAccountName: ServiceAccount "
                            + serviceAccount
                            + " not found in namespace "
                            + namespace
                            + (RunnerSpec.DEFAULT_SERVICE_ACCOUNT.equals(serviceAccount)
                                    ? " (install the runner RBAC there: Helm value"
                                            + " runner.namespaces, or kubectl apply -k"
                                            + " config/rbac/runner -n "
                                            + namespace
                                            + ")"
                                    : ""));
        }
        SecretKeyRef apiKey = run.getSpec().getTarget().getApiKeySecretRef();
        if (apiKey != null) {
            secret(namespace, "spec.target.apiKeySecretRef", apiKey, apiKey.getKey(), problems);
        }
        TlsSpec tls = run.getSpec().getTarget().getTls();
        if (tls != null && tls.getCaConfigMapRef() != null) {
            configMap(
                    namespace,
                    "spec.target.tls.caConfigMapRef",
                    tls.getCaConfigMapRef(),
                    TlsSpec.DEFAULT_CA_KEY,
                    problems);
        }
        if (tls != null && tls.getCaSecretRef() != null) {
            secret(
                    namespace,
                    "spec.target.tls.caSecretRef",
                    tls.getCaSecretRef(),
                    TlsSpec.DEFAULT_CA_KEY,
                    problems);
        }
        DatasetSpec dataset = run.getSpec().getWorkload().getDataset();
        if (dataset != null && dataset.getSource() != null) {
            if (dataset.getSource().getConfigMapRef() != null) {
                String defaultKey =
                        dataset.getType() == DatasetType.SHAREGPT
                                ? "dataset.json"
                                : "dataset.jsonl";
                configMap(
                        namespace,
                        "spec.workload.dataset.source.configMapRef",
                        dataset.getSource().getConfigMapRef(),
                        defaultKey,
                        problems);
            }
            if (dataset.getSource().getPvc() != null) {
                String claim = dataset.getSource().getPvc().getClaimName();
                if (client.persistentVolumeClaims().inNamespace(namespace).withName(claim).get()
                        == null) {
                    problems.add(
                            "spec.workload.dataset.source.pvc: PersistentVolumeClaim "
                                    + claim
                                    + " not found");
                }
            }
        }
        TokenizerSpec tokenizer = run.getSpec().getWorkload().getTokenizer();
        if (tokenizer != null && tokenizer.getConfigMapRef() != null) {
            configMap(
                    namespace,
                    "spec.workload.tokenizer.configMapRef",
                    tokenizer.getConfigMapRef(),
                    TokenizerSpec.DEFAULT_KEY,
                    problems);
        }
        return problems;
    }

    private void configMap(
            String namespace,
            String field,
            ConfigMapKeyRef ref,
            String defaultKey,
            List<String> problems) {
        ConfigMap configMap =
                client.configMaps().inNamespace(namespace).withName(ref.getName()).get();
        String key = ref.getKey() != null ? ref.getKey() : defaultKey;
        if (configMap == null) {
            problems.add(field + ": ConfigMap " + ref.getName() + " not found");
        } else if (!hasKey(configMap.getData(), key) && !hasKey(configMap.getBinaryData(), key)) {
            problems.add(field + ": ConfigMap " + ref.getName() + " has no key " + key);
        }
    }

    private void secret(
            String namespace,
            String field,
            SecretKeyRef ref,
            String defaultKey,
            List<String> problems) {
        Secret secret = client.secrets().inNamespace(namespace).withName(ref.getName()).get();
        String key = ref.getKey() != null ? ref.getKey() : defaultKey;
        if (secret == null) {
            problems.add(field + ": Secret " + ref.getName() + " not found");
        } else if (!hasKey(secret.getData(), key) && !hasKey(secret.getStringData(), key)) {
            problems.add(field + ": Secret " + ref.getName() + " has no key " + key);
        }
    }

    private static boolean hasKey(java.util.Map<String, String> data, String key) {
        return data != null && data.containsKey(key);
    }
}
