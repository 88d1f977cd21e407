"""A node provisioner of the tests, `sized`: pools by size whose nodes carry the pool's taints from registration (as a
cloud autoscaler's do), registered in-process by `tests.provisioners.registered`. It shows the faces a provisioner
package has (`policyc.backends.interface`), with a block of settings per pool."""
