"""Lists the pods of a namespace through a fan-out node with Debian's python3-kubernetes and a
bearer token, as an in-cluster program with its ServiceAccount token does. Prints one JSON line:
the pod names, or the HTTP status code and message of the refusal.

Usage: /usr/bin/python3 kube_list.py <server> <ca file> <token> <namespace>
"""
import json
import sys

from kubernetes import client

server, ca_file, token, namespace = sys.argv[1:5]
configuration = client.Configuration()
configuration.host = server
configuration.ssl_ca_cert = ca_file
configuration.api_key = {"authorization": token}
configuration.api_key_prefix = {"authorization": "Bearer"}
# The node's certificate names 127.0.0.1 as an IP address.
configuration.assert_hostname = False
core = client.CoreV1Api(client.ApiClient(configuration))
try:
    pods = core.list_namespaced_pod(namespace)
    print(json.dumps({"names": [p.metadata.name for p in pods.items]}))
except client.ApiException as e:
    print(json.dumps({"code": e.status, "message": json.loads(e.body)["message"]}))
