"""The Cluster API provisioner: pools whose nodes are the Machines of a MachineDeployment, bootstrapped by kubeadm.

policyc cannot write a whole MachineDeployment (its infrastructure and bootstrap templates are the user's), so it
writes what to merge into the user's own, `clusterapi/pools.yaml`, per pool:

- the MachineDeployment's `spec.template.metadata.labels`: the pool's labels. Cluster API copies them to the
  Machines and, for the keys it syncs (prefix `node-role.kubernetes.io`, domains `node-restriction.kubernetes.io`
  and `node.cluster.x-k8s.io` and their subdomains, and the regexes of the manager's
  `--additional-sync-machine-labels`, which the policy repeats), from each Machine to its Node, in place, from v1.4
  on. Every label of a pool must be one of those (`rules`): a kubelet could not set a label under
  node-restriction.kubernetes.io on its own node, and one it set from its flags would never follow the policy.
- the KubeadmConfigTemplate's `joinConfiguration.nodeRegistration.taints`: the pool's taints, which kubeadm gives
  the kubelet as it joins, so a node registers tainted. With the manager's alpha gate `MachineTaintPropagation`
  (v1.12 on; `machineTaintPropagation: true`), the same taints also go into the MachineDeployment's
  `spec.template.spec.taints` (`propagation: Always`), so a change of the policy reaches nodes already there.

The file targets the management cluster, not the cluster the policy describes: Argo CD does not apply it.
"""
