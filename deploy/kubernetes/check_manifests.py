#!/usr/bin/env python3
"""Checks deploy/kubernetes: every YAML file parses, and the names one object gives another agree.

  check_manifests.py [--dir DIR] [--oaprofd-help FILE]

Checked: each manifest has apiVersion, kind, metadata.name and the namespace of namespace.yaml;
the DaemonSet's selector matches its pods; the monitors and the job honour the exporter's labels;
the Service, the monitors, the NetworkPolicy and the plain-Prometheus job select those pods and name a port the container declares; the exporter
listens on that port; oaprofd's flags (in the DaemonSet and the Dockerfile) are options
`oaprofd --help-all` lists (given as FILE); the socket and the state directory lie on the host's
/run/oaprof; the example workload mounts that directory where oaprof looks for the socket and
holds the group oaprofd admits. Prints each problem as `FILE: what disagrees` and exits 1 if there
is one, else prints a summary and exits 0. Needs PyYAML (Debian's python3-yaml).
"""

import argparse
import pathlib
import re
import sys

import yaml

DEFAULT_SOCKET = "/run/oaprof/oaprofd.sock"  # session/daemon_paths.h, where clients look
HOST_STATE_DIR = "/run/oaprof"  # the host's state directory (udev/tmpfiles.d/oaprof.conf)
# The per-kernel series' namespace and pod are the client's pod (docs/exporter.md); without
# honouring them the target's (oaprofd's own pod) would be written over them.
HONOR_LABELS = "does not honour the exporter's labels (per-kernel namespace and pod)"


class Problems:
    def __init__(self):
        self.lines = []

    def add(self, where, what):
        self.lines.append(f"{where}: {what}")


def load_documents(directory, problems):
    """Every document of every *.yaml, as (file name, document)."""
    docs = []
    for path in sorted(pathlib.Path(directory).glob("*.yaml")):
        try:
            for doc in yaml.safe_load_all(path.read_text()):
                if doc is not None:
                    docs.append((path.name, doc))
        except yaml.YAMLError as error:
            problems.add(path.name, f"does not parse as YAML: {error}")
    return docs


def one(docs, kind, problems):
    found = [(f, d) for f, d in docs if d.get("kind") == kind]
    if len(found) != 1:
        problems.add("deploy/kubernetes", f"{len(found)} objects of kind {kind}, expected 1")
        return None, {}
    return found[0]


def selects(selector, labels):
    """Whether matchLabels `selector` (non-empty) picks an object with `labels`."""
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_metadata(docs, namespace, problems):
    for name, doc in docs:
        if "scrape_configs" in doc:
            continue  # prometheus.yml's fragment, not a Kubernetes object
        meta = doc.get("metadata") or {}
        for key in ("apiVersion", "kind"):
            if not doc.get(key):
                problems.add(name, f"has no {key}")
        if not meta.get("name"):
            problems.add(name, "has no metadata.name")
        if doc.get("kind") != "Namespace" and meta.get("namespace") not in (namespace, "default"):
            problems.add(name, f"namespace {meta.get('namespace')!r} is not {namespace!r}")


def container(daemonset):
    return daemonset["spec"]["template"]["spec"]["containers"][0]


def port_names(daemonset):
    return {p["name"]: p["containerPort"] for p in container(daemonset).get("ports", [])}


def check_daemonset(name, ds, problems):
    spec = ds["spec"]
    pod_labels = spec["template"]["metadata"].get("labels", {})
    if not selects(spec["selector"].get("matchLabels"), pod_labels):
        problems.add(name, "spec.selector does not match the pod template's labels")
    security = container(ds).get("securityContext", {})
    if security.get("privileged") or not security.get("readOnlyRootFilesystem"):
        problems.add(name, "oaprofd must run unprivileged on a read-only root file system")
    if "ALL" not in security.get("capabilities", {}).get("drop", []):
        problems.add(name, "capabilities must drop ALL and add back only what oaprofd needs")


def flag_value(args, flag):
    """The value given to `flag` in an argument list (--flag VALUE or --flag=VALUE), or None."""
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return str(args[i + 1])
        if str(arg).startswith(flag + "="):
            return str(arg)[len(flag) + 1 :]
    return None


def check_flags(where, args, known, problems):
    for arg in args:
        flag = str(arg).split("=", 1)[0]
        if flag.startswith("--") and known is not None and flag not in known:
            problems.add(where, f"{flag} is not an option of oaprofd (oaprofd --help-all)")


def check_exporter_port(name, ds, problems):
    args = container(ds).get("args", [])
    listen = flag_value(args, "--metrics-listen")
    ports = port_names(ds)
    if listen is None or "metrics" not in ports:
        problems.add(name, "oaprofd needs --metrics-listen and a container port named metrics")
        return
    if not listen.endswith(f":{ports['metrics']}"):
        problems.add(name, f"--metrics-listen {listen} is not port metrics ({ports['metrics']})")


def host_path_of(pod_spec, mount_path):
    """The hostPath whose mount holds `mount_path` in the pod's first container, or None."""
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    best = None
    for mount in pod_spec["containers"][0].get("volumeMounts", []):
        base = mount["mountPath"].rstrip("/")
        if mount_path == base or mount_path.startswith(base + "/"):
            host = volumes.get(mount["name"], {}).get("hostPath", {}).get("path")
            if host is not None and (best is None or len(base) > len(best[0])):
                best = (base, host.rstrip("/") + mount_path[len(base) :])
    return best[1] if best else None


def check_host_paths(name, ds, problems):
    args = container(ds).get("args", [])
    pod = ds["spec"]["template"]["spec"]
    state = flag_value(args, "--state-dir")
    socket = flag_value(args, "--socket")
    if state is None or host_path_of(pod, state) != HOST_STATE_DIR:
        problems.add(name, f"--state-dir {state} is not the host's {HOST_STATE_DIR}")
    if socket is None or host_path_of(pod, socket) != HOST_STATE_DIR + "/oaprofd.sock":
        problems.add(name, f"--socket {socket} is not in the host's {HOST_STATE_DIR}")
    if host_path_of(pod, "/sys/bus/pci") != "/sys/bus/pci":
        problems.add(name, "the host's /sys must be mounted at /sys (libpciaccess reads it there)")


def check_service(name, svc, pod_labels, ports, problems):
    spec = svc.get("spec", {})
    if spec.get("clusterIP") != "None":
        problems.add(name, "the Service must be headless (clusterIP: None)")
    if not selects(spec.get("selector"), pod_labels):
        problems.add(name, "spec.selector does not match oaprofd's pods")
    for port in spec.get("ports", []):
        target = port.get("targetPort", port.get("port"))
        number = ports.get(target, target)
        if number not in ports.values() or port.get("port") != number:
            problems.add(name, f"port {port.get('name')} ({port.get('port')} → {target}) is not "
                         f"a port oaprofd's container declares ({ports})")


def check_monitor(name, mon, labels, port_set, namespace, problems):
    spec = mon.get("spec", {})
    if not selects(spec.get("selector", {}).get("matchLabels"), labels):
        problems.add(name, "spec.selector does not match what it should scrape")
    if namespace not in spec.get("namespaceSelector", {}).get("matchNames", []):
        problems.add(name, f"namespaceSelector does not name {namespace}")
    endpoints = spec.get("endpoints", spec.get("podMetricsEndpoints", []))
    if not endpoints:
        problems.add(name, "scrapes no endpoint")
    for endpoint in endpoints:
        if endpoint.get("port") not in port_set:
            problems.add(name, f"port {endpoint.get('port')!r} is not one of {sorted(port_set)}")
        if endpoint.get("path", "/metrics") != "/metrics":
            problems.add(name, "oaprofd serves /metrics only")
        if endpoint.get("honorLabels") is not True:
            problems.add(name, HONOR_LABELS)


def check_network_policy(name, policy, pod_labels, ports, problems):
    spec = policy.get("spec", {})
    if not selects(spec.get("podSelector", {}).get("matchLabels"), pod_labels):
        problems.add(name, "podSelector does not match oaprofd's pods")
    for rule in spec.get("ingress", []):
        for port in rule.get("ports", []):
            if port.get("port") not in ports and port.get("port") not in ports.values():
                problems.add(name, f"port {port.get('port')!r} is not oaprofd's")


def relabel_keeps(job, source, value):
    """Whether the job's `keep` rule on `source` keeps `value` (and there is such a rule)."""
    for rule in job.get("relabel_configs", []):
        if rule.get("action") == "keep" and rule.get("source_labels") == [source]:
            return re.fullmatch(rule.get("regex", "(.*)"), value) is not None
    return False


def check_scrape_config(name, doc, pod_labels, namespace, problems):
    jobs = doc.get("scrape_configs", [])
    if len(jobs) != 1:
        problems.add(name, f"{len(jobs)} scrape jobs, expected 1")
        return
    job = jobs[0]
    app = pod_labels.get("app.kubernetes.io/name", "")
    if not relabel_keeps(job, "__meta_kubernetes_pod_label_app_kubernetes_io_name", app):
        problems.add(name, f"no keep rule that keeps pods labelled app.kubernetes.io/name={app}")
    if not relabel_keeps(job, "__meta_kubernetes_pod_container_port_name", "metrics"):
        problems.add(name, "no keep rule that keeps the container port named metrics")
    if job.get("honor_labels") is not True:
        problems.add(name, HONOR_LABELS)
    sd = (job.get("kubernetes_sd_configs") or [{}])[0]
    if namespace not in sd.get("namespaces", {}).get("names", []):
        problems.add(name, f"kubernetes_sd_configs does not look in namespace {namespace}")


def check_workload(name, pod, ds, problems):
    spec = pod.get("spec", {})
    env = {e["name"]: e.get("value") for e in spec["containers"][0].get("env", [])}
    socket = env.get("OAPROF_DAEMON_SOCKET", DEFAULT_SOCKET)
    daemon_socket = flag_value(container(ds).get("args", []), "--socket")
    daemon_side = host_path_of(ds["spec"]["template"]["spec"], daemon_socket or "")
    if daemon_side is None or host_path_of(spec, socket) != daemon_side:
        problems.add(name, f"oaprof looks for {socket}, which is not oaprofd's socket "
                     f"({daemon_socket} on the host's {daemon_side})")
    group = flag_value(container(ds).get("args", []), "--group")
    groups = [str(g) for g in spec.get("securityContext", {}).get("supplementalGroups", [])]
    if group not in groups:
        problems.add(name, f"supplementalGroups {groups} lack oaprofd's --group {group}")


def check_dockerfile(directory, known, problems):
    path = pathlib.Path(directory) / "Dockerfile"
    if not path.exists():
        problems.add("Dockerfile", "is missing")
        return
    text = path.read_text()
    if not re.search(r"^FROM debian:12", text, re.M):
        problems.add("Dockerfile", "is not based on Debian 12")
    if not re.search(r'^ENTRYPOINT \["/usr/bin/oaprofd"\]', text, re.M):
        problems.add("Dockerfile", "the entry point is not the packaged /usr/bin/oaprofd")
    cmd = re.search(r"^CMD (\[.*\])$", text, re.M)
    check_flags("Dockerfile", yaml.safe_load(cmd.group(1)) if cmd else [], known, problems)


def known_flags(help_file):
    """The long options `oaprofd --help-all` prints, or None when no help was given."""
    if help_file is None:
        return None
    text = pathlib.Path(help_file).read_text()
    return set(re.findall(r"(?:^|[\s,])(--[a-z][a-z0-9-]*)", text))


def check(directory, help_file):
    problems = Problems()
    docs = load_documents(directory, problems)
    ns_file, ns = one(docs, "Namespace", problems)
    namespace = ns.get("metadata", {}).get("name", "oaprof")
    check_metadata(docs, namespace, problems)
    ds_file, ds = one(docs, "DaemonSet", problems)
    if not ds:
        return problems, len(docs)
    known = known_flags(help_file)
    check_daemonset(ds_file, ds, problems)
    check_flags(ds_file, container(ds).get("args", []), known, problems)
    check_exporter_port(ds_file, ds, problems)
    check_host_paths(ds_file, ds, problems)
    check_dockerfile(directory, known, problems)
    check_related(docs, ds, namespace, problems)
    return problems, len(docs)


def check_related(docs, ds, namespace, problems):
    pod_labels = ds["spec"]["template"]["metadata"].get("labels", {})
    ports = port_names(ds)
    svc_file, svc = one(docs, "Service", problems)
    if svc:
        check_service(svc_file, svc, pod_labels, ports, problems)
        service_ports = {p.get("name") for p in svc["spec"].get("ports", [])}
        sm_file, sm = one(docs, "ServiceMonitor", problems)
        if sm:
            check_monitor(sm_file, sm, svc["metadata"].get("labels", {}), service_ports,
                          namespace, problems)
    pm_file, pm = one(docs, "PodMonitor", problems)
    if pm:
        check_monitor(pm_file, pm, pod_labels, set(ports), namespace, problems)
    np_file, np = one(docs, "NetworkPolicy", problems)
    if np:
        check_network_policy(np_file, np, pod_labels, ports, problems)
    scrape = [(f, d) for f, d in docs if "scrape_configs" in d]
    for name, doc in scrape or [("prometheus-scrape.yaml", {})]:
        check_scrape_config(name, doc, pod_labels, namespace, problems)
    pod_file, pod = one(docs, "Pod", problems)
    if pod:
        check_workload(pod_file, pod, ds, problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=pathlib.Path(__file__).resolve().parent)
    parser.add_argument("--oaprofd-help", help="a file holding `oaprofd --help-all`'s output")
    options = parser.parse_args()
    problems, count = check(options.dir, options.oaprofd_help)
    for line in problems.lines:
        print(line)
    if problems.lines:
        return 1
    print(f"deploy/kubernetes: {count} documents consistent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
