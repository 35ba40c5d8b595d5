// Command busy is the real-node tests' workload: it spins on N threads for a wall-clock duration and
// prints the CPU time it got, so a test can see a node's CPU quota confine a real process; with -listen
// it instead serves its pod's name over HTTP, as a Service backend.
//
// It is static and ships as its own one-file image, so the real-node tests need no image builder.
//
//	busy -threads 2 -seconds 6   → prints "threads=2 wall_s=6.00 cpu_s=1.49"
//	busy -listen :8080           → GET / answers "busy <hostname>"
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"syscall"
	"time"
)

func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return -1
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

func main() {
	threads := flag.Int("threads", 2, "busy threads")
	seconds := flag.Float64("seconds", 5, "wall-clock seconds to spin")
	listen := flag.String("listen", "", "serve GET / on this address instead of spinning")
	flag.Parse()
	if *listen != "" {
		host, _ := os.Hostname()
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "busy %s\n", host) })
		fmt.Fprintln(os.Stderr, http.ListenAndServe(*listen, nil))
		os.Exit(1)
	}
	if *threads < 1 || *seconds <= 0 {
		fmt.Fprintln(os.Stderr, "busy: -threads must be >= 1 and -seconds > 0")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*threads)
	start := time.Now()
	deadline := start.Add(time.Duration(*seconds * float64(time.Second)))
	done := make(chan struct{})
	for i := 0; i < *threads; i++ {
		go func() {
			x := uint64(1)
			for time.Now().Before(deadline) {
				for j := 0; j < 100000; j++ {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			if x == 0 { // keeps the loop from being optimised away
				fmt.Print("")
			}
			done <- struct{}{}
		}()
	}
	for i := 0; i < *threads; i++ {
		<-done
	}
	fmt.Printf("threads=%d wall_s=%.2f cpu_s=%.2f\n", *threads, time.Since(start).Seconds(), cpuSeconds())
}
