"""Reads the local control plane's kubeconfig (written by testcluster, one cluster and one user
with file paths) without a YAML library: the benchmarks run on Python's standard library alone."""
import re


def kubeconfig(path):
    """The server URL and the CA, client certificate and key paths."""
    text = open(path).read()

    def field(name):
        match = re.search(rf"^\s*{name}:\s*(\S+)\s*$", text, re.M)
        if not match:
            raise SystemExit(f"{path}: no {name}")
        return match.group(1)

    return {"server": field("server"), "ca": field("certificate-authority"),
            "cert": field("client-certificate"), "key": field("client-key")}
