#!/usr/bin/python3
"""The security and placement settings of deploy/kubernetes, asserted over the objects as
rendered by validate.mjs. The label and resource names are NVIDIA's: Node Feature Discovery's
`feature.node.kubernetes.io/pci-15b3.present` and GPU Feature Discovery's
`nvidia.com/gpu.present` (Mellanox/network-operator README, "NFD labels are used"), the
GPU Operator's `nvidia.com/gpu` taint key and RuntimeClass `nvidia`, the RDMA shared device
plugin's `rdma/...` resources. Kubernetes' gRPC probe calls grpc.health.v1 in plaintext
(KEP-2727), hence the probe port is the agent's --health-listen port."""
import json
import sys

failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def args_of(container):
    return dict(a.split("=", 1) for a in container.get("args", []) if a.startswith("--") and "=" in a)


def main():
    objs = [o["object"] for path in sys.argv[1:] for o in json.load(open(path))]
    kinds = {(o["kind"], o["metadata"].get("name") or o["metadata"].get("generateName")) for o in objs}
    print("objects:", ", ".join(f"{k}/{n}" for k, n in sorted(kinds)))

    rbac = [o for o in objs if o["kind"] in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
                                             "ServiceAccount")]
    check(not rbac, "no RBAC objects and no ServiceAccount: the namespace's defaults only")

    for ds in [o for o in objs if o["kind"] == "DaemonSet"]:
        check_agent(ds, objs)

    for o in objs:
        if o["kind"] == "Deployment" or o["kind"] == "DaemonSet":
            check_reloader(o)
    check_jobs(objs)
    check_server(objs)
    kinds_present = {o["kind"] for o in objs}
    check({"ServiceMonitor", "PrometheusRule"} <= kinds_present, "monitoring: a ServiceMonitor and a PrometheusRule")
    sm = next((o for o in objs if o["kind"] == "ServiceMonitor"), None)
    if sm:
        ep = sm["spec"]["endpoints"][0]
        check(ep.get("scheme") == "https" and ep["tlsConfig"]["ca"]["secret"]["name"] == "gdrbench-server-tls" and
              ep["tlsConfig"]["serverName"] == f'gdrbench-server.{sm["metadata"]["namespace"]}.svc' and
              ep["authorization"]["credentials"]["name"], "ServiceMonitor: HTTPS, the server's CA and name, a token")

    certs = [o for o in objs if o["kind"] == "Certificate"]
    secrets = {x["spec"]["secretName"] for x in certs}
    check({"gdrbench-agent-tls", "gdrbench-controller-tls", "gdrbench-server-tls"} <= secrets,
          "cert-manager Certificates make the Secrets the manifests mount")
    for x in certs:
        ns = x["metadata"]["namespace"]
        check(all(n.endswith(f".{ns}.svc") for n in x["spec"].get("dnsNames", [])),
              f'Certificate/{x["metadata"]["name"]}: names in its own namespace {ns}')
    if failures:
        print(f"{len(failures)} security check(s) failed", file=sys.stderr)
        sys.exit(1)


def container(spec, name):
    return next(c for c in spec["containers"] if c["name"] == name)


def check_reloader(o):
    spec = o["spec"]["template"]["spec"]
    who = f'{o["kind"]}/{o["metadata"]["name"]}'
    names = [c["name"] for c in spec["containers"]]
    check(spec.get("shareProcessNamespace") is True and "tls-reloader" in names,
          f"{who}: a tls-reloader sidecar in a shared process namespace (SIGHUP on a renewed Secret)")
    r = container(spec, "tls-reloader")
    rsc = r.get("securityContext", {})
    check(rsc.get("capabilities", {}).get("drop") == ["ALL"] and not rsc.get("capabilities", {}).get("add") and
          rsc.get("readOnlyRootFilesystem") is True and rsc.get("allowPrivilegeEscalation") is False,
          f"{who}: the reloader has no capability and a read-only root")
    tls_mounts = [m for m in r["volumeMounts"] if m["mountPath"] == "/etc/gdrbench/tls"]
    check(len(tls_mounts) == 1 and tls_mounts[0]["readOnly"] and "/etc/gdrbench/tls" in r["command"],
          f"{who}: the reloader watches the TLS Secret's mount, read-only")


def check_agent(ds, objs):
    spec = ds["spec"]["template"]["spec"]
    who = ds["metadata"]["name"]
    c = container(spec, "agent")
    a = args_of(c)
    sc = c.get("securityContext", {})
    check(spec.get("hostNetwork") is True, f"{who}: hostNetwork (RoCE GIDs live in the host namespace)")
    check(spec.get("automountServiceAccountToken") is False, f"{who}: no service account token")
    check(sc.get("privileged") in (None, False), f"{who}: not privileged")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"] and
          sc.get("capabilities", {}).get("add") == ["IPC_LOCK"], f"{who}: capabilities drop ALL, add IPC_LOCK only")
    check(sc.get("allowPrivilegeEscalation") is False, f"{who}: no privilege escalation")
    check(sc.get("readOnlyRootFilesystem") is True, f"{who}: read-only root filesystem")
    check(spec.get("runtimeClassName") == "nvidia", f"{who}: RuntimeClass nvidia (the GPUs)")
    limits = c.get("resources", {}).get("limits", {})
    check(any(k.startswith("rdma/") for k in limits), f"{who}: an rdma/ device plugin resource (/dev/infiniband)")

    vols = {v["name"]: v for v in spec.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for host, inside in (("/sys", "/host/sys"), ("/proc", "/host/proc"),
                         ("/etc/modules-load.d", "/host/etc/modules-load.d")):
        m = mounts.get(inside)
        ok = m is not None and m.get("readOnly") is True and vols[m["name"]].get("hostPath", {}).get("path") == host
        check(ok, f"{who}: host {host} mounted read-only at {inside}")
    host_paths = [v for v in vols.values() if "hostPath" in v]
    check(all(mounts_for(v["name"], c)["readOnly"] for v in host_paths), f"{who}: every hostPath mount read-only")
    check(a.get("--fs-root") == "/host", f"{who}: preflight reads the host's files (--fs-root /host)")

    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    keys = {e["key"]: e for t in terms for e in t["matchExpressions"]}
    for label in ("feature.node.kubernetes.io/pci-15b3.present", "nvidia.com/gpu.present"):
        e = keys.get(label)
        check(e is not None and e["operator"] == "In" and e["values"] == ["true"], f"{who}: node label {label}=true")
    check(any(t.get("key") == "nvidia.com/gpu" and t.get("effect") == "NoSchedule" for t in spec.get("tolerations", [])),
          f"{who}: tolerates the nvidia.com/gpu NoSchedule taint")

    health = a.get("--health-listen", "")
    hport = int(health.rsplit(":", 1)[1]) if ":" in health else None
    for probe in ("livenessProbe", "readinessProbe"):
        p = c.get(probe, {})
        check("grpc" in p and p["grpc"].get("port") == hport and not p["grpc"].get("service"),
              f"{who}: {probe} is gRPC grpc.health.v1 on the --health-listen port {hport}")
    check(a.get("--tls-client-ca", "").startswith("/etc/gdrbench/tls/") and "--insecure" not in c.get("args", []),
          f"{who}: mTLS from the mounted Secret, never --insecure")
    check(vols["tls"]["secret"]["secretName"] == "gdrbench-agent-tls", f"{who}: TLS from Secret gdrbench-agent-tls")

    svc = next(o for o in objs if o["kind"] == "Service" and o["metadata"]["name"] == who)
    check(svc["spec"].get("clusterIP") == "None", f"{who} Service is headless (one DNS record per agent)")
    check(svc["spec"]["selector"] == ds["spec"]["selector"]["matchLabels"], f"{who} Service selects the DaemonSet's pods")

    check(spec.get("priorityClassName") == "system-node-critical", f"{who}: priority class system-node-critical")
    check(all(v.get("hostPath", {}).get("type") != "DirectoryOrCreate" for v in spec.get("volumes", [])),
          f"{who}: no hostPath DirectoryOrCreate (a read-only view creates nothing on the host)")
    acc = keys.get("gdrbench.io/acceptance")
    gpus = c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
    if ds["spec"]["selector"]["matchLabels"].get("gdrbench.io/pool") == "acceptance":
        check(acc is not None and acc["operator"] == "In" and gpus, f"{who}: labelled nodes only, GPUs requested")
    else:
        check(acc is not None and acc["operator"] == "NotIn" and not gpus,
              f"{who}: leaves nodes under acceptance alone, requests no GPU (shared nightly mode)")


def check_jobs(objs):
    for o in objs:
        if o["kind"] not in ("CronJob", "Job"):
            continue
        jt = o["spec"]["jobTemplate"]["spec"] if o["kind"] == "CronJob" else o["spec"]
        ps = jt["template"]["spec"]
        jc = container(ps, "sweep")
        name = f'{o["kind"]}/{o["metadata"].get("name") or o["metadata"].get("generateName")}'
        ja = args_of(jc)
        agents = ja.get("--agents", "")
        check(agents.startswith("dns:gdrbench-agent") and ".$(POD_NAMESPACE).svc:" in agents and
              any(e["name"] == "POD_NAMESPACE" and e["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
                  for e in jc.get("env", [])),
              f"{name}: agents found by DNS through a headless Service of the pod's own namespace")
        check(not ps.get("hostNetwork") and ps.get("automountServiceAccountToken") is False and
              ps.get("securityContext", {}).get("runAsNonRoot") is True and
              jc["securityContext"]["capabilities"]["drop"] == ["ALL"] and
              not jc["securityContext"].get("capabilities", {}).get("add"),
              f"{name}: unprivileged, non-root, no capabilities, no API token")
        check(jt.get("backoffLimit") == 0, f"{name}: a failed sweep is not retried")
        check(ja.get("--server", "").startswith("gdrbench-server.") and "--server-token-file" in ja and
              "--server-insecure" not in jc.get("args", []), f"{name}: uploads to gdrbench-server over TLS with a token")
        if o["kind"] == "CronJob":
            check(o["spec"].get("concurrencyPolicy") == "Forbid", f"{name}: concurrencyPolicy Forbid")
            check(bool(o["spec"].get("timeZone")), f"{name}: a timeZone for its schedule")



def check_server(objs):
    dep = next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == "gdrbench-server")
    ds_ = dep["spec"]["template"]["spec"]
    sc_ = container(ds_, "server")
    sa = args_of(sc_)
    check(dep["spec"]["replicas"] == 1 and dep["spec"]["strategy"]["type"] == "Recreate",
          "server: one replica, Recreate (one writer of the SQLite file)")
    check(not ds_.get("hostNetwork") and ds_.get("automountServiceAccountToken") is False and
          ds_["securityContext"].get("runAsNonRoot") is True and sc_["securityContext"]["capabilities"]["drop"] == ["ALL"]
          and not sc_["securityContext"]["capabilities"].get("add") and sc_["securityContext"]["readOnlyRootFilesystem"],
          "server: unprivileged, non-root, no capabilities, read-only root, no API token")
    check("--insecure" not in sc_.get("args", []) and sa.get("--tokens") and sa.get("--tls-cert"),
          "server: TLS and bearer tokens, never --insecure")
    dvols = {v["name"]: v for v in ds_["volumes"]}
    db_mount = next(m for m in sc_["volumeMounts"] if sa.get("--db", "").startswith(m["mountPath"] + "/"))
    check("persistentVolumeClaim" in dvols[db_mount["name"]], "server: the SQLite store is on a PVC")
    pg = next(e for e in sc_.get("env", []) if e["name"] == "PGPASSWORD")
    check(pg["valueFrom"]["secretKeyRef"]["name"] == "gdrbench-server-postgres",
          "server: the PostgreSQL password only from a Secret (PGPASSWORD)")
    for probe in ("livenessProbe", "readinessProbe"):
        h = sc_.get(probe, {}).get("httpGet", {})
        check(h.get("path") == "/healthz" and h.get("scheme") == "HTTPS", f"server: {probe} GET /healthz over HTTPS")
    ssvc = next(o for o in objs if o["kind"] == "Service" and o["metadata"]["name"] == "gdrbench-server")
    check({p["port"] for p in ssvc["spec"]["ports"]} == {int(sa["--grpc-listen"].rsplit(":", 1)[1]),
                                                          int(sa["--http-listen"].rsplit(":", 1)[1])},
          "server Service exposes its gRPC and HTTPS ports")



def mounts_for(volume, container):
    return next(m for m in container["volumeMounts"] if m["name"] == volume)


if __name__ == "__main__":
    main()
