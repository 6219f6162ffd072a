"""Debian's Kubernetes Python client (python3-kubernetes) against a Kubernetes API server, as its
README shows it. Run by KubeScriptClientsTest with /usr/bin/python3:

  kube_client.py http://HOST:PORT list NAMESPACE
      prints the pods of NAMESPACE as one JSON line
  kube_client.py http://HOST:PORT watch NAMESPACE [RESOURCE_VERSION]
      watch.Watch().stream(list_namespaced_pod) from RESOURCE_VERSION: one JSON line per event,
      until killed (the stream resumes from the last event's resourceVersion when the server
      ends it, as the client does)
  kube_client.py http://HOST:PORT follow NAMESPACE
      lists, then watches, recovering from broken connections and 410 (see follow), until killed

A failure prints {"error": ...} and exits 1.
"""
import json
import sys
import time

from kubernetes import client, watch


def pod(p):
    return {
        "name": p.metadata.name,
        "namespace": p.metadata.namespace,
        "node": p.spec.node_name,
        "resourceVersion": p.metadata.resource_version,
    }


def main():
    server, command, namespace = sys.argv[1:4]
    configuration = client.Configuration()
    configuration.host = server
    v1 = client.CoreV1Api(client.ApiClient(configuration))
    if command == "list":
        pods = v1.list_namespaced_pod(namespace)
        print(json.dumps({
            "kind": pods.kind,
            "resourceVersion": pods.metadata.resource_version,
            "items": [pod(p) for p in pods.items],
            "imageIDs": [c.image_id for p in pods.items for c in (p.status.container_statuses or [])],
        }), flush=True)
    elif command == "watch":
        kwargs = {}
        if len(sys.argv) > 4:
            kwargs["resource_version"] = sys.argv[4]
        for event in watch.Watch().stream(v1.list_namespaced_pod, namespace, **kwargs):
            print(json.dumps({"type": event["type"], **pod(event["object"])}), flush=True)
        print(json.dumps({"type": "END"}), flush=True)
    elif command == "follow":
        follow(v1, namespace)
    else:
        raise SystemExit("usage: kube_client.py SERVER list|watch|follow NAMESPACE [RESOURCE_VERSION]")


def follow(v1, namespace):
    """Lists, then watches, as the client's documentation asks of its users: after a broken
    connection, watches again from the last resourceVersion seen; after 410 Expired (the stream
    retries once itself, then raises), lists again and watches from the list."""
    resource_version = None
    while True:
        try:
            if resource_version is None:
                pods = v1.list_namespaced_pod(namespace)
                resource_version = pods.metadata.resource_version
                print(json.dumps({"type": "LIST", "names": sorted(p.metadata.name for p in pods.items)}), flush=True)
            for event in watch.Watch().stream(v1.list_namespaced_pod, namespace, resource_version=resource_version):
                resource_version = event["object"].metadata.resource_version
                print(json.dumps({"type": event["type"], **pod(event["object"])}), flush=True)
        except client.exceptions.ApiException as e:
            if e.status == 410:
                print(json.dumps({"type": "EXPIRED"}), flush=True)
                resource_version = None
            else:
                print(json.dumps({"type": "RETRY", "message": str(e.status)}), flush=True)
                time.sleep(1)
        except Exception as e:  # a broken connection, a node that is gone: watch again
            print(json.dumps({"type": "RETRY", "message": type(e).__name__}), flush=True)
            time.sleep(1)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # reported to the test as a line, not a traceback
        print(json.dumps({"error": type(e).__name__, "message": str(e)}), flush=True)
        sys.exit(1)
