#!/usr/bin/env bash
# Lists the host-wide state a real node can change, for a before/after comparison:
#   e2e/scripts/host-state.sh > before; make e2e-node; e2e/scripts/host-state.sh > after; diff before after
# Sysctls kubelet writes (and the forwarding switches), links, network namespaces, nft tables,
# iptables/ip6tables rules, mounts. Other programs on the machine may change some of these too.
set -uo pipefail
echo "## sysctls"
for s in vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops \
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward \
  net.ipv4.conf.all.forwarding net.ipv4.conf.all.route_localnet net.ipv6.conf.all.forwarding; do
  f=/proc/sys/${s//.//}
  [ -e "$f" ] && echo "$s = $(cat "$f")"
done
echo "## ip link"; ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort
echo "## ip netns"; ip netns list | awk '{print $1}' | sort
echo "## nft list tables"; nft list tables 2>/dev/null | sort
for t in filter nat mangle; do
  echo "## iptables -t $t -S"; iptables -t "$t" -S 2>/dev/null
  echo "## ip6tables -t $t -S"; ip6tables -t "$t" -S 2>/dev/null
done
echo "## fixed paths"; for p in /var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods /run/containerd /etc/cni /opt/cni; do [ -e "$p" ] && echo "$p"; done
echo "## mounts"; awk '{print $2}' /proc/self/mounts | sort
