# Sourced by provision-k8s.sh and provision-node.sh: the one wrapper module that builds every
# Kubernetes binary of the project's cluster from the Go module proxy, and the ldflags that stamp
# them, so that kubelet and kube-proxy are the same version and build as the control plane.
# Needs K8S_VERSION, BUILD_ROOT and log().

# Commands the wrapper module imports; a build may pick any subset of them.
K8S_BUILD_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy kubeadm)

k8s_build_dir() { echo "$BUILD_ROOT/kubernetes-$K8S_VERSION"; }

# Writes (or extends) the wrapper module: k8s.io/kubernetes plus every staging module replaced by
# its published v0.X.Y release; tools.go imports every command in K8S_BUILD_CMDS.
k8s_prepare_module() {
  local dir; dir=$(k8s_build_dir)
  mkdir -p "$dir"
  ( cd "$dir"
    local want
    want=$(printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "${K8S_BUILD_CMDS[@]}")
    if [ -f go.mod ] && [ -f tools.go ] && [ -f go.sum ] && [ "$(grep -c '_ "k8s.io/kubernetes/cmd/' tools.go)" = "${#K8S_BUILD_CMDS[@]}" ]; then
      exit 0
    fi
    go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" >/dev/null
    local kmod
    kmod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    local goline godebug
    goline=$(grep -m1 '^go ' "$kmod")
    godebug=$(grep -m1 '^godebug ' "$kmod" || true)
    {
      echo "module inferencebench.local/k8s-build"
      echo
      echo "$goline"
      echo
      [ -n "$godebug" ] && echo "$godebug" && echo
      echo "require k8s.io/kubernetes v$K8S_VERSION"
      echo
      grep -E '=> \./staging/src/' "$kmod" | awk -v v="v0.${K8S_VERSION#1.}" '{print "replace " $1 " => " $1 " " v}'
    } > go.mod
    printf '//go:build tools\n\npackage tools\n\nimport (\n%s\n)\n' "$want" > tools.go
    go mod tidy >/dev/null 2>&1 || go mod tidy
  )
}

# The -X flags of Kubernetes' own build (hack/lib/version.sh), with a fixed commit marker.
k8s_ldflags() {
  local minor="${K8S_VERSION#1.}"; minor="${minor%%.*}"
  local date; date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date -X $pkg.gitCommit=module-proxy-build"
  done
  echo "$ld"
}

# k8s_build DEST CMD...: builds the given commands (names from K8S_BUILD_CMDS) into DEST.
k8s_build() {
  local dest=$1; shift
  k8s_prepare_module
  local pkgs=()
  for c in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  ( cd "$(k8s_build_dir)" && CGO_ENABLED=0 go build -trimpath -ldflags "$(k8s_ldflags)" -o "$dest/" "${pkgs[@]}" )
}
