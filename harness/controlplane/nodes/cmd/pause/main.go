// Command pause is the sandbox ("pause") container of the real-node harness.
//
// containerd's CRI plugin starts one per pod to hold its namespaces. It must exist as a local image
// (no registry is reachable), so it is built here: sleep, reap the pod's orphaned children (it is PID 1
// of the pod's PID namespace when the namespace is shared), and exit promptly on SIGTERM/SIGINT so a
// pod sandbox stops without waiting for a SIGKILL.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		// Reap every child that has exited; WNOHANG so a still-running child does not block us.
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
