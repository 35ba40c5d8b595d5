// Command busy is the real-node tests' CPU load: it spins on N threads for a wall-clock duration and
// prints the CPU time it got, so a test can see a node's CPU quota confine a real process.
//
// It is static and ships as its own one-file image, so the real-node tests need no image builder.
//
//	busy -threads 2 -seconds 6   → prints "threads=2 wall_s=6.00 cpu_s=1.49"
package main

import (
	"flag"
	"fmt"
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
	flag.Parse()
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
