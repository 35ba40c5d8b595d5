// Command etcd is the etcd server built from the published module.
//
// `go install go.etcd.io/etcd/server/v3@...` is refused because etcd's own
// go.mod has relative replace directives; importing its etcdmain package from
// our module sidesteps that and lets the etcd version follow k8s.io/kubernetes.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
