// Command etcd is etcd's server, built from the go.etcd.io/etcd/server/v3 module for envtest.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
