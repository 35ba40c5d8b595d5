// Command kwok-default-stages prints KWOK's built-in "fast" node and pod
// Stages as one multi-document YAML stream.
//
// KWOK v0.8.0 no longer falls back to these stages when none are configured
// (it exits with "no stages found"), so the e2e harness passes them back in
// with --config. Printing them from the pinned kwok module, instead of keeping
// a copy in this repo, keeps them in step with the kwok binary.
package main

import (
	"fmt"
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

func main() {
	stages := []string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeat,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	}
	for i, s := range stages {
		if i > 0 {
			fmt.Println("---")
		}
		fmt.Println(strings.TrimSpace(s))
	}
}
