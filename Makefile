# InferenceBench — build, test, demo. Every target selects a JDK >= 21 itself.
SHELL := /bin/bash
JAVA_HOME := $(shell scripts/java-home.sh)
export JAVA_HOME
MVN := ./mvnw -B -ntp
# Maven runs on the selected JDK; keep its own warnings off the console.
export MAVEN_OPTS ?= --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow

.PHONY: help demo demo-cli test unit it e2e e2e-node build images images-push fmt fmt-check clean \
	host-packages tools k8s-binaries helm model-sim model-sim-test containerd chromium node \
	control-plane-up cluster-up control-plane-down kind kind-up kind-down e2e-kind demo-kind \
	test-vllm vllm-up vllm-down test-transformers transformers-up transformers-down peer-fixtures

# Every target of .PHONY is listed here: MakeHelpTest (testkit) fails when one is missing.
help:
	@echo "Quick start:"
	@echo "  make demo          - the product on a real single-node cluster: chart-installed operator, simulator, a 3-rate sweep, LPG profiles in results/ (root; KEEP=1 leaves it running)"
	@echo "  make demo-cli      - the runner CLI against a local simulator process, no cluster: a rate sweep, LPG profiles in results/"
	@echo "  make test          - provision binaries and the real node, then unit (*Test), API-server (*IT) and cluster (*E2E, real node; root) tiers"
	@echo "Test tiers and build:"
	@echo "  make unit          - unit tests only (Java)"
	@echo "  make it            - unit and API-server (*IT) tiers, no cluster (builds the images first: ImagesIT runs them)"
	@echo "  make e2e           - unit and cluster (*E2E) tiers, no *IT (real node; root)"
	@echo "  make e2e-node      - only the real-node classes (RealNodeE2E, OperatorClusterE2E, HostileControlPlaneE2E, ServerMetricsClusterE2E, ExternalServerE2E): a real kubelet + containerd node, the chart-installed operator (root)"
	@echo "  make build         - compile and package (no tests)"
	@echo "  make images        - operator, runner and model-sim image tarballs in target/images/ (no daemon, no registry)"
	@echo "  make images-push   - push the operator and runner images to IMAGE_REGISTRY instead"
	@echo "  make fmt           - format Java sources (google-java-format, AOSP)"
	@echo "  make fmt-check     - fail when a Java source is not formatted"
	@echo "  make clean         - remove the build outputs (target/)"
	@echo "Tools (cached, version-keyed, skipped when present):"
	@echo "  make host-packages - the Debian packages of missing host tools: jq, gcc, python3, curl, iproute2, nftables, iptables, conntrack, procps, containerd, runc, CNI plugins (root)"
	@echo "  make tools         - host packages, Kubernetes control-plane binaries, Helm, containerd, model-server simulator, Chromium"
	@echo "  make k8s-binaries  - kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler in ~/.kubeapitest"
	@echo "  make helm          - Helm 3, built from the Go module proxy"
	@echo "  make model-sim     - the model-server simulator (e2e/model-sim)"
	@echo "  make model-sim-test - go vet and go test of the simulator"
	@echo "  make containerd    - containerd, ctr and runc (Debian packages)"
	@echo "  make chromium      - Debian's Chromium for the HTML report's browser test"
	@echo "  make node          - the real node's parts: kubelet, kube-proxy, containerd/runc/CNI, CoreDNS, the pause image"
	@echo "A cluster for manual use (root; one per machine):"
	@echo "  make control-plane-up   - the control plane and the real node with the images imported; prints the kubeconfig path"
	@echo "  make cluster-up         - the same as control-plane-up"
	@echo "  make control-plane-down - stop it and restore the host"
	@echo "Kind (Docker; not in make test):"
	@echo "  make kind          - kind, Docker and the offline node image"
	@echo "  make kind-up       - a Kind cluster with the images loaded"
	@echo "  make kind-down     - delete it and restore the host"
	@echo "  make e2e-kind      - OperatorClusterE2E on a Kind cluster (node image built offline when none is given; root)"
	@echo "  make demo-kind     - make demo on a Kind cluster (root, Docker; KEEP=1 leaves it running)"
	@echo "A real vLLM on the CPU (AVX-512 + VNNI only, skipped elsewhere; installs ~8 GB once; not in make test):"
	@echo "  make test-vllm     - the *VllmIT tier against it"
	@echo "  make vllm-up       - start it and leave it running"
	@echo "  make vllm-down     - stop it"
	@echo "Hugging Face transformers serve on the CPU (any x86-64; installs ~7 GB once; not in make test):"
	@echo "  make test-transformers - the *TransformersIT tier against it: the runner CLI and the operator (real node; root)"
	@echo "  make transformers-up   - start it and leave it running"
	@echo "  make transformers-down - stop it"
	@echo "Other tools' result files (installs vllm, AIPerf, inference-perf, GuideLLM once, ~17 GB; not in make test):"
	@echo "  make peer-fixtures - run each peer against the simulator; fail when a result file's format differs from the committed fixtures (UPDATE=1 replaces them)"

images:
	scripts/images/build-images.sh

images-push:
	@[ -n "$$IMAGE_REGISTRY" ] || { echo "images-push: set IMAGE_REGISTRY (e.g. IMAGE_REGISTRY=registry.example.com/inferencebench)"; exit 2; }
	PUSH=1 scripts/images/build-images.sh

k8s-binaries:
	e2e/scripts/provision-k8s.sh

helm:
	e2e/scripts/provision-helm.sh

model-sim:
	e2e/scripts/provision-model-sim.sh

containerd:
	e2e/scripts/provision-containerd.sh

# Debian's Chromium for the HTML report's browser test (a no-op when /usr/bin/chromium exists).
chromium:
	e2e/scripts/provision-chromium.sh >/dev/null

# The Debian packages of the host tools the scripts and tests run, for those missing (make demo
# runs the same script).
host-packages:
	e2e/scripts/provision-host-packages.sh

tools: host-packages k8s-binaries helm model-sim containerd chromium

# kubelet, kube-proxy, containerd/runc/CNI, CoreDNS and the pause image of the real node (cached).
node:
	e2e/scripts/provision-node.sh >/dev/null

# The real-node classes alone (they are in `make test` too). RealNode takes the machine's E2E lock
# itself and waits for it; the flock here also keeps the build's other steps apart.
E2E_LOCK ?= /tmp/inferencebench-e2e.lock
export E2E_LOCK
e2e-node: tools node images
	$(MVN) -q -DskipTests install -pl e2e -am
	$(if $(shell command -v flock),flock $(E2E_LOCK)) $(MVN) verify -Pit -pl e2e -DskipITs=true -Dit.test='RealNodeE2E,OperatorClusterE2E,HostileControlPlaneE2E,ServerMetricsClusterE2E,ExternalServerE2E'

# Kind: kind from the Go module proxy, Docker (Debian's docker.io), the node image built offline
# from the project's own builds unless IB_KIND_NODE_IMAGE names one (cached).
kind: tools node
	e2e/scripts/provision-kind.sh >/dev/null

# OperatorClusterE2E against a Kind cluster: the cluster is created, the suite loads the images
# (kind load image-archive), installs the chart and runs; the cluster is deleted and the host
# restored at the end. Under the E2E lock for the cluster's whole life.
e2e-kind: kind images
	$(MVN) -q -DskipTests install -pl e2e -am
	$(if $(shell command -v flock),flock $(E2E_LOCK)) bash -c 'trap "e2e/scripts/kind-cluster.sh down" EXIT; \
	  e2e/scripts/kind-cluster.sh up >/dev/null && \
	  $(MVN) verify -Pit,node -pl e2e -DskipITs=true -Dit.test=OperatorClusterE2E -Dinferencebench.cluster=kind'

# The demo of `make demo` on a Kind cluster (scripts/demo-cluster.sh --kind).
demo-kind:
	scripts/demo-cluster.sh --kind

kind-up: kind images
	$(if $(shell command -v flock),flock $(E2E_LOCK)) e2e/scripts/kind-cluster.sh up $(foreach i,$(wildcard target/images/*.tar),--load $(i))

kind-down:
	e2e/scripts/kind-cluster.sh down

build:
	$(MVN) -DskipTests install

unit:
	$(MVN) install

# ImagesIT (IT tier) runs the image tarballs, so the tiers that include it build them first.
it: tools images
	$(MVN) install -Pit -DskipE2E=true

e2e: tools node images
	$(MVN) install -Pit -DskipITs=true

# A real vLLM on the CPU (e2e/scripts/vllm-cpu.sh: cached venv, tiny model, dummy weights). Not in
# `make test`: the cold install is ~8 GB and 3-10 minutes. The tests start the server when it is not
# up and stop it at the end; one started by `make vllm-up` is used and left running. The wheel runs
# only on a CPU with AVX-512 (F/BW/VL/DQ) and VNNI: elsewhere the tier is skipped, with the missing
# flags named, before anything is provisioned (exit 0; make test-transformers runs anywhere).
test-vllm:
	@if e2e/scripts/vllm-cpu.sh check-cpu; then \
	  $(MAKE) tools node && e2e/scripts/vllm-cpu.sh install >/dev/null && $(MAKE) images && \
	  $(MVN) install -Pvllm; \
	else \
	  echo "make test-vllm: SKIPPED: this CPU cannot run the vLLM CPU build (see above)"; \
	fi

vllm-up:
	e2e/scripts/vllm-cpu.sh up

vllm-down:
	e2e/scripts/vllm-cpu.sh down

# Hugging Face transformers serve on the CPU (e2e/scripts/transformers-serve.sh: cached venv,
# version-keyed; the project's tiny random-weight Llama, made locally): a real third-party server
# with a strict OpenAI schema and no /metrics, on any x86-64 CPU. RunnerCliTransformersIT (runner)
# and OperatorTransformersIT (e2e: the real node, so root and the E2E lock) run against it; unit
# tests are skipped. Not in `make test`: a cold install is ~7 GB (see README, The transformers
# tier). verify, not install: nothing of this tier needs the local Maven repository.
test-transformers: tools node
	e2e/scripts/transformers-serve.sh install >/dev/null
	$(MAKE) images
	$(MVN) verify -Ptransformers

transformers-up:
	e2e/scripts/transformers-serve.sh up

transformers-down:
	e2e/scripts/transformers-serve.sh down

# The fixtures of the unit tier that compare and report read (runner/src/test/resources/peer-results):
# each peer, pinned in bench/peer_bench.py and installed into its cached venv, runs one workload
# against the simulator; a file whose keys or JSON types differ from the committed one fails the
# target. UPDATE=1 writes the new files and VERSIONS.json instead. Not in `make test`: vLLM's wheel
# alone is ~9 GB.
peer-fixtures: model-sim
	python3 bench/peer_bench.py install --tools vllm,aiperf,inference-perf,guidellm >/dev/null
	$(MVN) -q -DskipTests package -pl runner -am
	python3 bench/peer_fixtures.py $(if $(UPDATE),update,check)

model-sim-test:
	cd e2e/model-sim && go vet ./... && go test -count=1 ./...

# clean first: the root project's clean would delete target/images, which the IT tier runs.
test: tools node model-sim-test
	$(MVN) -q clean
	$(MAKE) images
	$(MVN) install -Pit

# The real cluster (control plane + kubelet/containerd node), Helm chart, simulator, sweep; provisions
# what is not cached and restores the host at the end. Takes the E2E lock itself.
demo:
	scripts/demo-cluster.sh

demo-cli: model-sim
	$(MVN) -q -DskipTests install -pl runner -am
	scripts/demo.sh

fmt:
	$(MVN) -q spotless:apply

fmt-check:
	$(MVN) -q spotless:check

# The real node for manual use, with the images imported (stop it with make control-plane-down).
control-plane-up: tools node images
	e2e/scripts/control-plane.sh up $(foreach i,$(wildcard target/images/*.tar),--import $(i))

cluster-up: control-plane-up

control-plane-down:
	e2e/scripts/control-plane.sh down

clean:
	$(MVN) -q clean
